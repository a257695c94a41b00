package engine_test

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// A node deleted while its owner was dead is listed by no one: its
// provider, still offered under the dead owner's marker, is reserved and
// then marked by the engine that takes its partition, and deleted once
// proven gone. A provider of a partition the taker does not hold is left
// alone, and once all are adopted no cycle lists the dead owner again.
func TestTakeOverAdoptsWhatTheDeadOwnerLeftBehind(t *testing.T) {
	const parts = 4
	a := newRig(t, 16)
	a.eng.SetScope(engine.Scope{Partitions: parts, Held: []int{0, 1, 2, 3}}, nil)
	a.cleanCycle()
	p0, p1 := inPartition(16, 0), inPartition(16, 1)
	if len(p0) < 2 || len(p1) < 1 {
		t.Fatalf("partitions of 16 nodes: %v %v", p0, p1)
	}
	gone, notMine := nodeUUID(p0[0]), nodeUUID(p1[0])
	a.src.set(func(s *source) { // a dies; then two nodes are deleted
		s.nodes = slices.DeleteFunc(s.nodes, func(n hostabi.Node) bool { return n.UUID == gone || n.UUID == notMine })
		s.gone[gone], s.gone[notMine] = true, true
	})
	b := taker(a, nil)
	b.eng.SetScope(engine.Scope{Partitions: parts, Held: []int{0, 2, 3}}, b.pol.MayTakeOver)
	a.fake.ResetRequests()
	b.cycle()
	p := a.provider(gone)
	if !slices.Contains(p.Traits, b.ownerT) || slices.Contains(p.Traits, a.ownerT) {
		t.Fatalf("left-behind provider's traits %v: want the taker's marker only", p.Traits)
	}
	if a.reserved(gone) != 1 {
		t.Fatalf("left-behind provider reserved %d, want fully", a.reserved(gone))
	}
	var order []string
	for _, q := range a.fake.Requests() {
		if q.Method == "PUT" && strings.HasPrefix(q.Path, "/resource_providers/"+gone+"/") {
			order = append(order, path.Base(q.Path))
		}
	}
	if len(order) < 2 || order[0] != "inventories" || !slices.Contains(order, "traits") {
		t.Fatalf("writes of the left-behind provider: %v, want the reserve first, then the marker", order)
	}
	if q := a.provider(notMine); !slices.Contains(q.Traits, a.ownerT) || a.reserved(notMine) != 0 {
		t.Fatalf("a provider of a partition the taker does not hold was touched: %v", q.Traits)
	}
	deleted := false
	for range 3 {
		deleted = deleted || b.cycle().Deleted == 1
	}
	if _, still := a.fake.Provider(gone); !deleted || still {
		t.Fatalf("the left-behind provider was not deleted once proven gone")
	}
	a.fake.ResetRequests()
	b.cycle()
	for _, q := range a.fake.Requests() {
		if strings.Contains(q.Query, a.ownerT) {
			t.Fatalf("an idle cycle after the adoption listed the dead owner again: %s?%s", q.Path, q.Query)
		}
	}
}
