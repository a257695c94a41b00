package engine_test

import (
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// A node that leaves the scope (moved to another shard: no longer listed,
// but it exists) is fully reserved from the cycle that sees it leave, at
// no cost once reserved, and written by the rules again when it comes
// back. Beside nova, nova may still report it and write reserved 0 back:
// it is held (a hold it had stays), and released when it comes back.
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
		r.checkNotOffered(nova, "left the scope", nodeUUID(2), nodeUUID(3))
		if rep.Reserved["left_scope"] != 2 || rep.Outcomes[2].Reserved != "left_scope" {
			t.Fatalf("nova=%v: report %v, outcome %+v", nova, rep.Reserved, rep.Outcomes[2])
		}
		if nova && (!r.held(nodeUUID(3)) || !r.held(nodeUUID(2))) {
			t.Fatalf("beside nova, a node that left the scope is not held: %v %v", r.held(nodeUUID(2)), r.held(nodeUUID(3)))
		}
		if nova { // nova still reports the node: its refresh writes reserved 0 back
			r.novaRewrites(nodeUUID(2), 0, false)
			r.checkNotOffered(nova, "left the scope, after nova's rewrite", nodeUUID(2))
		}
		r.fake.ResetRequests()
		r.cleanCycle()
		if w := r.fake.Find("PUT", "/resource_providers/*/inventories"); len(w) != 0 {
			t.Fatalf("nova=%v: a reserved node that stayed out was written again: %v", nova, w)
		}
		if nova { // a new process: the hold's generation is known, nothing read again
			r.restart()
			r.eng = engine.New(src, r.pc, r.pol, r.opts, r.state, nil)
			r.fake.ResetRequests()
			r.cleanCycle()
			if reqs := r.fake.Requests(); len(reqs) != 2 {
				t.Fatalf("a new process beside a held node out of the scope sent %d requests: %v", len(reqs), reqs)
			}
		}
		src.listed = 4 // back in scope
		r.cleanCycle()
		if p := r.provider(nodeUUID(2)); p.Inventories[goldRC].Reserved != 0 || p.Usages[goldRC] != 0 {
			t.Fatalf("nova=%v: back in scope, still reserved or held: %+v, used %v", nova, p.Inventories[goldRC], p.Usages)
		}
	}
}

// checkNotOffered fails unless each node's provider has no free unit of
// any class (reserved or held).
func (r *rig) checkNotOffered(nova bool, what string, nodes ...string) {
	r.t.Helper()
	for _, u := range nodes {
		p := r.provider(u)
		for rc, inv := range p.Inventories {
			if inv.Total-inv.Reserved-p.Usages[rc] > 0 {
				r.t.Fatalf("nova=%v: %s %s and is offered: %s %+v, used %d", nova, u, what, rc, inv, p.Usages[rc])
			}
		}
	}
}

// A source that lists a node outside the scope's conductor groups (an
// Ironic that ignored the filter, a plugin without one) shows it moved
// away: its provider is reserved as left the scope, as when the source
// leaves it out.
func TestNodeListedInAnotherGroupIsReserved(t *testing.T) {
	r := newRig(t, 3)
	r.src.set(func(s *source) {
		for i := range s.nodes {
			s.nodes[i].ConductorGroup = "rack-a"
		}
	})
	r.pol.Scope.ConductorGroups = []string{"rack-a"}
	r.restart()
	r.eng = engine.New(&scopeShrunk{source: r.src, listed: 3}, r.pc, r.pol, r.opts, r.state, nil) // proves each present
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[1].ConductorGroup = "rack-b" })
	rep := r.cleanCycle()
	r.checkNotOffered(false, "moved to another conductor group", nodeUUID(1))
	if rep.Reserved["left_scope"] != 1 {
		t.Fatalf("report %v", rep.Reserved)
	}
	if inv := r.provider(nodeUUID(0)).Inventories[goldRC]; inv.Reserved != 0 {
		t.Fatalf("a node still in the group was reserved: %+v", inv)
	}
}
