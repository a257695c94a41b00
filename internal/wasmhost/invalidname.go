package wasmhost

import (
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
)

// nameInvalid makes the reason of each record the host refused say where
// to find it: the plugin, the record's position in the listing and the
// name it gave. A record refused for its uuid (a number, say) has none,
// and "node : number in "uuid" is not a string" left an operator nothing
// to search the source for.
func nameInvalid(plugin string, nodes []hostabi.Node) {
	for i := range nodes {
		n := &nodes[i]
		if n.Invalid == nil {
			continue
		}
		name := "no name"
		if n.Name != "" {
			name = fmt.Sprintf("name %q", Printable(n.Name))
		}
		inv := *n.Invalid
		inv.Reason = fmt.Sprintf("plugin %s, node record %d of the listing (%s): %s", Printable(plugin), i+1, name, inv.Reason)
		n.Invalid = &inv
	}
}
