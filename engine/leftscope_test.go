package engine_test

import (
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// A node that leaves the scope (moved to another shard: no longer listed,
// but it exists) is fully reserved from the cycle that sees it leave, at
// no cost once reserved, and written by the rules again when it comes
// back; beside nova its hold stays.
func TestNodeLeavingTheScopeIsReserved(t *testing.T) {
	for _, nova := range []bool{false, true} {
		r := newRig(t, 4)
		if nova {
			r = besideRig(t, 4)
		}
		src := &scopeShrunk{source: r.src, listed: 4}
		r.eng = engine.New(src, r.pc, r.pol, r.opts, r.state, nil)
		r.src.set(func(s *source) { s.nodes[3].Retired = true }) // held beside nova
		r.cleanCycle()
		src.listed = 2 // nodes 2 and 3 move to another shard
		rep := r.cleanCycle()
		for _, u := range []string{nodeUUID(2), nodeUUID(3)} {
			if inv := r.provider(u).Inventories[goldRC]; inv.Reserved != inv.Total {
				t.Fatalf("nova=%v: %s left the scope and is offered: %+v", nova, u, inv)
			}
		}
		if rep.Reserved["left_scope"] != 2 || rep.Outcomes[2].Reserved != "left_scope" {
			t.Fatalf("nova=%v: report %v, outcome %+v", nova, rep.Reserved, rep.Outcomes[2])
		}
		if nova && !r.held(nodeUUID(3)) {
			t.Fatalf("the hold of a node that left the scope was released")
		}
		r.fake.ResetRequests()
		r.cleanCycle()
		if w := r.fake.Find("PUT", "/resource_providers/*/inventories"); len(w) != 0 {
			t.Fatalf("nova=%v: a reserved node that stayed out was written again: %v", nova, w)
		}
		src.listed = 4 // back in scope
		r.cleanCycle()
		if inv := r.provider(nodeUUID(2)).Inventories[goldRC]; inv.Reserved != 0 {
			t.Fatalf("nova=%v: back in scope, still reserved: %+v", nova, inv)
		}
	}
}
