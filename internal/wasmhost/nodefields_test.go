package wasmhost

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// The optional fields are held to the answer's limits as they stream in
// (an owner, a property key or value over max_field_length, more than
// max_traits properties), and then to what was asked: the node over
// either is marked, the nodes beside it decode whole.
func TestNodeFieldsCaps(t *testing.T) {
	lim := Limits{MaxRecords: 3, MaxField: 16, MaxTraits: 2}
	asked := hostabi.NodeFields{Owner: true, Properties: []string{"properties.rack", "extra.row"}}
	ok := `{"uuid":"ok","owner":"p1","properties":{"properties.rack":"r12"}}`
	for _, c := range []struct {
		name, node, code, reason string
		asked                    hostabi.NodeFields
	}{
		{"owner over", `"owner":"12345678901234567"`, hostabi.InvalidFieldTooLong, `a string in "owner" is longer than 16 bytes`, asked},
		{"value over", `"properties":{"extra.row":"12345678901234567"}`, hostabi.InvalidFieldTooLong, `a string in "extra.row" is longer than 16 bytes`, asked},
		{"key over", `"properties":{"12345678901234567":"x"}`, hostabi.InvalidFieldTooLong, `is longer than 16 bytes`, asked},
		{"properties over the entry cap", `"properties":{"a":"1","b":"2","c":"3"}`, hostabi.InvalidTooManyEntries, `"properties" holds more than 2 entries (plugin.max_traits)`, asked},
		{"properties over those asked", `"properties":{"properties.rack":"1","extra.row":"2"}`, hostabi.InvalidTooManyEntries, `more than the 1 asked`, hostabi.NodeFields{Properties: []string{"properties.rack"}}},
		{"property not asked", `"properties":{"extra.rack":"1"}`, hostabi.InvalidValue, `"extra.rack", which was not asked`, asked},
		{"owner not asked", `"owner":"p1"`, hostabi.InvalidValue, `"owner", which was not asked`, hostabi.NodeFields{Properties: asked.Properties}},
		{"value not a string", `"properties":{"extra.row":{"a":1}}`, hostabi.InvalidValue, `is not a string`, asked},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"nodes":[` + ok + `,{"uuid":"bad",` + c.node + `},` + ok + `],"complete":true}`
			out, err := decodeNodes(doc, lim, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			checkNodeFields(out.Nodes, c.asked)
			if len(out.Nodes) != 3 {
				t.Fatalf("%d nodes", len(out.Nodes))
			}
			bad := out.Nodes[1].Invalid
			if bad == nil || bad.Code != c.code || !strings.Contains(bad.Reason, c.reason) {
				t.Fatalf("marked %+v, want %s %q", bad, c.code, c.reason)
			}
			if len(out.Nodes[1].Properties) > len(c.asked.Properties) {
				t.Fatalf("the marked node keeps %d properties", len(out.Nodes[1].Properties))
			}
			for _, i := range []int{0, 2} {
				if n := out.Nodes[i]; c.asked.Owner && (n.Invalid != nil || n.Owner != "p1" || n.Properties["properties.rack"] != "r12") {
					t.Fatalf("node %d beside it: %+v", i, n)
				}
			}
		})
	}
}
