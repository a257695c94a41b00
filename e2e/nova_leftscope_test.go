package e2e

// leftScope moves a free node out of the engine's scope while nova,
// which still covers it, reports it free. The move is in the engine's
// view of Ironic (its conductor group): Ironic 21.4 refuses a group no
// conductor serves, and nova 26 has no shards, so nova's answer is the
// real one (the node in its group, free). The engine reserves and holds
// the node from the cycle that sees it leave; nova's refresh writes
// reserved 0 back, the hold keeps it off the scheduler and neither side
// writes again; back in scope, the hold goes and the node is offered.
func (r *novaRig) leftScope() {
	t := r.t
	u := r.kinds["free"][1]
	r.view.set(u, "conductor_group", "rack-b")
	r.pending[u] = true
	ew, rep := r.engineStep("node left the scope")
	p := r.pollCandidates(u)
	t.Logf("FIGURE left scope: engine %d writes %v, reserved %v, nova %+v", len(ew), ew, rep.Reserved, rep.Nova)
	if rep.Reserved["left_scope"] != 1 || rep.Nova.Placed != 1 || r.holdOf(u)[r.rc[u]] != 1 {
		t.Fatalf("node left the scope: reserved %v, %+v, hold %v", rep.Reserved, rep.Nova, r.holdOf(u))
	}
	nw := r.novaStep("node out of the engine's scope, refresh", false, true)
	t.Logf("FIGURE left scope: nova's refresh %d writes %v, inventory %v", len(nw), nw, r.inventoryOf(u))
	ew, _ = r.engineStep("node out of the scope, after nova's refresh")
	if len(ew) != 0 {
		t.Fatalf("a held node out of the scope was written again after nova's refresh: %v", ew)
	}
	r.quiet("node out of the scope", 1)
	polls, seen := p.stop()
	t.Logf("FIGURE left scope: %d polls of allocation_candidates, %d saw it offered", polls, len(seen))
	if polls == 0 || len(seen) > 0 {
		t.Fatalf("node out of the scope: %d polls, offered: %v", polls, seen)
	}
	r.view.set(u, "conductor_group", nil)
	r.pending[u] = false
	if _, rep = r.engineStep("node back in scope"); rep.Nova.Released != 1 || len(r.holdOf(u)) != 0 {
		t.Fatalf("node back in scope: %+v, hold %v", rep.Nova, r.holdOf(u))
	}
	if offered, _ := offeredNow(r.placement, r.rc[u]); !offered[u] {
		t.Fatalf("node back in scope is not offered: %v", r.inventoryOf(u))
	}
}
