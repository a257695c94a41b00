package wasmhost

import (
	"strings"
	"testing"
)

// A record refused for its uuid is named by plugin, position and the name
// it gave, so an operator can find it at the source; the good records
// around it are untouched.
func TestInvalidRecordNamedByPluginPositionAndName(t *testing.T) {
	doc := `{"nodes":[{"uuid":"ok","resource_class":"gold"},{"uuid":7,"name":"rack1-n07"},{"uuid":8}],"complete":true}`
	got, err := decodeNodes(doc, Limits{MaxRecords: 3, MaxField: 64, MaxTraits: 2}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	nameInvalid("ironic", got.Nodes)
	if got.Nodes[0].Invalid != nil {
		t.Fatalf("a good record marked: %+v", got.Nodes[0].Invalid)
	}
	for i, want := range map[int]string{
		1: `plugin ironic, node record 2 of the listing (name "rack1-n07"): number in "uuid" is not a string`,
		2: `plugin ironic, node record 3 of the listing (no name): number in "uuid" is not a string`,
	} {
		if bad := got.Nodes[i].Invalid; bad == nil || !strings.Contains(bad.Reason, want) {
			t.Errorf("record %d: %+v, want %q", i+1, bad, want)
		}
	}
}
