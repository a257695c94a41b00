package guest

import "github.com/rpengine/rpengine/hostabi"

// RefLister is a Plugin that can answer list_nodes by reference
// (hostabi.EncodingRefs, ABI.md §4): when every node it lists is a record
// of a projection the host kept (HTTPRequest.Keep, HTTPResponse.Ref), it
// answers which records they are instead of the nodes, and the host
// builds them from its own frames. The SDK calls ListNodeRefs instead of
// ListNodes when the host offers the encoding.
type RefLister interface {
	// ListNodeRefs lists like ListNodes. It returns the nodes by
	// reference, or (refs nil) as nodes when the host kept no projection
	// of some page.
	ListNodeRefs(req hostabi.ListNodesRequest) (refs *hostabi.NodeRefs, nodes []hostabi.Node, err error)
}

// listNodes lists by reference when the host offered it and p can.
func listNodes(p Plugin, req hostabi.ListNodesRequest, byRef bool) ([]hostabi.Node, *hostabi.NodeRefs, error) {
	if rl, ok := p.(RefLister); ok && byRef {
		refs, nodes, err := rl.ListNodeRefs(req)
		return nodes, refs, err
	}
	nodes, err := p.ListNodes(req)
	return nodes, nil, err
}
