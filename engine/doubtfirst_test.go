package engine_test

import (
	"slices"
	"strings"
	"testing"
)

// A node deleted from the source is reserved (its first proof) before the
// cycle's syncs write anything: a take-over's hundreds of marker flips,
// or any long sync, must not keep a deleted node offered meanwhile.
func TestVanishedNodeIsReservedBeforeTheSyncs(t *testing.T) {
	r := newRig(t, 6)
	r.cleanCycle()
	gone := nodeUUID(5)
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:5]
		s.gone = map[string]bool{gone: true}
		for i := range s.nodes {
			s.nodes[i].Traits = []string{"CUSTOM_RACK_A"} // a write for every listed node
		}
	})
	r.fake.ResetRequests()
	r.cleanCycle()
	var order []string
	for _, q := range r.fake.Requests() {
		if q.Method != "GET" {
			order = append(order, q.Method+" "+q.Path)
		}
	}
	first := slices.IndexFunc(order, func(w string) bool { return strings.Contains(w, gone) })
	if first != 0 || len(order) < 6 {
		t.Fatalf("the deleted node's reserve is write %d of %v", first, order)
	}
	if inv := r.provider(gone).Inventories[goldRC]; inv.Reserved != inv.Total {
		t.Fatalf("first proof: not reserved: %+v", inv)
	}
}
