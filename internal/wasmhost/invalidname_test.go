package wasmhost

import (
	"strings"
	"testing"
)

// A record refused for its uuid is named by plugin, position and the name
// it gave, so an operator can find it at the source; the good records
// around it are untouched.
func TestInvalidRecordNamedByPluginPositionAndName(t *testing.T) {
	long := strings.Repeat("n", 100)
	doc := `{"nodes":[{"uuid":"ok","resource_class":"gold"},{"uuid":7,"name":"rack1-n07"},{"uuid":8},` +
		`{"uuid":"5d7e0f5c-0000-4000-8000-000000000000","name":"` + long + `"}],"complete":true}`
	got, err := decodeNodes(doc, Limits{MaxRecords: 4, MaxField: 64, MaxTraits: 2}, 1<<20)
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
	// A refused record with a uuid is named by it: no prefix to repeat.
	if bad := got.Nodes[3].Invalid; bad == nil || strings.Contains(bad.Reason, "plugin ironic") {
		t.Errorf("record 4: %+v", bad)
	}
}
