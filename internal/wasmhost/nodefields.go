package wasmhost

import (
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/hostabi"
)

// The optional node fields (hostabi.NodeFields) are asked for by the
// host, from Options.NodeFields, in every list_nodes and read_nodes
// request, so that a listing and a node sync give the same node. A
// request that asks for them offers no binary encoding: rpb1 and rpr1
// carry neither field, and a node must be the same in every encoding.
// The answer's JSON is held to Limits while it streams in (an owner, a
// key or a value over max_field_length, more than max_traits
// properties); checkNodeFields then holds each node to what was asked.

// askFields puts the host's node fields into a request's own (the
// engine's scope never sets them) and says whether it asks for any.
func (p *Plugin) askFields(f *hostabi.NodeFields) bool {
	if f.Empty() {
		*f = p.opts.NodeFields
	}
	return !f.Empty()
}

// checkNodeFields marks each node that carries an optional field it was
// not asked for: an owner not asked (bad_value), a property not asked,
// or more properties than were asked (too_many_entries). Such a node's
// values cannot be trusted to be the ones the rules name, and its
// extra entries are dropped so they cost nothing past the answer.
func checkNodeFields(nodes []hostabi.Node, f hostabi.NodeFields) {
	for i := range nodes {
		n := &nodes[i]
		bad := nodeFieldsFault(n, f)
		if bad == nil {
			continue
		}
		n.Owner, n.Properties = "", nil
		if n.Invalid == nil {
			n.Invalid = bad
		}
	}
}

func nodeFieldsFault(n *hostabi.Node, f hostabi.NodeFields) *hostabi.Invalid {
	if n.Owner != "" && !f.Owner {
		return &hostabi.Invalid{Code: hostabi.InvalidValue, Reason: "it has an \"owner\", which was not asked"}
	}
	if len(n.Properties) > len(f.Properties) {
		return &hostabi.Invalid{Code: hostabi.InvalidTooManyEntries,
			Reason: fmt.Sprintf("its \"properties\" hold %d entries, more than the %d asked", len(n.Properties), len(f.Properties))}
	}
	for k := range n.Properties {
		if !slices.Contains(f.Properties, k) {
			return &hostabi.Invalid{Code: hostabi.InvalidValue,
				Reason: fmt.Sprintf("its \"properties\" hold \"%s\", which was not asked", Printable(shortName(k)))}
		}
	}
	return nil
}
