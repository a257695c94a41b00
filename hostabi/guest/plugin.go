package guest

import "github.com/rpengine/rpengine/hostabi"

// Plugin is what an inventory source implements.
type Plugin interface {
	// Configure receives the [plugin.config] table as JSON. It is called
	// once per instance, before any other operation.
	Configure(config []byte) (name string, err error)
	// ListNodes returns every node in scope, or an error: never a part.
	ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error)
	// ListInstances returns the consumers placed on the nodes.
	ListInstances() ([]hostabi.Instance, error)
}

var plugin Plugin

// Run registers p. Call it from main's init or main; the host calls the
// exports afterwards. Under -buildmode=c-shared main returns at once.
func Run(p Plugin) { plugin = p }
