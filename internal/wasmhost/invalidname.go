package wasmhost

import (
	"fmt"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
)

// nameInvalid makes the reason of each refused record without a usable
// uuid say where to find it: the plugin, the record's position in the
// listing and the name it gave. A record refused for its uuid (a number,
// say) has none, and "node : number in "uuid" is not a string" left an
// operator nothing to search the source for. One with a uuid is named by
// it already (and a listing of 100 refused records must keep its report
// within bounds: plugins/hostile's corpus).
func nameInvalid(plugin string, nodes []hostabi.Node) {
	for i := range nodes {
		n := &nodes[i]
		if n.Invalid == nil || hostabi.ValidUUID(n.UUID) {
			continue
		}
		name := "no name"
		if n.Name != "" {
			name = fmt.Sprintf("name %q", shortName(Printable(n.Name)))
		}
		inv := *n.Invalid
		inv.Reason = fmt.Sprintf("plugin %s, node record %d of the listing (%s): %s", Printable(plugin), i+1, name, inv.Reason)
		n.Invalid = &inv
	}
}

// shortName keeps a name to 64 bytes in a message (whole runes): a refused
// record's name may be as long as plugin.max_field_length, and the report
// of a listing of such records must stay bounded.
func shortName(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}
