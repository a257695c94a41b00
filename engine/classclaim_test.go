package engine_test

import (
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// A bare-metal node claimed under its old class (a scheduler's claim that
// landed before the class changed) must not be offered under the new
// one: the new class is written fully reserved beside the retained old
// one until the claim goes, then as the rules say.
func TestClassChangeOnAClaimedNodeOffersNothing(t *testing.T) {
	r := newRig(t, 2)
	r.cleanCycle()
	u := nodeUUID(0)
	claim := "c0ffee00-0000-4000-8000-0000000000aa"
	if err := r.fake.Allocate(claim, u, map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes[0].ResourceClass = "baremetal-silver" })
	for range 2 {
		r.cleanCycle()
		inv := r.provider(u).Inventories
		if s, g := inv["CUSTOM_BAREMETAL_SILVER"], inv["CUSTOM_BAREMETAL_GOLD"]; s.Total != 1 || s.Reserved != 1 || g.Reserved != g.Total {
			t.Fatalf("claimed node offered: silver %+v, gold %+v", s, g)
		}
	}
	if err := r.fake.Allocate(claim, u, map[string]int64{}); err != nil { // the claim goes
		t.Fatal(err)
	}
	r.cleanCycle()
	inv := r.provider(u).Inventories
	if _, old := inv["CUSTOM_BAREMETAL_GOLD"]; old || inv["CUSTOM_BAREMETAL_SILVER"].Reserved != 0 {
		t.Fatalf("after the claim left: %+v", inv)
	}
}

// Beside nova, a faulted node claimed under its old class changes class:
// the hold's reshape cannot drop the old class, which is not an error and
// offers nothing (the new class fully reserved until the claim goes);
// then the hold and nova's inventory land in one reshape.
func TestBesideNovaClassChangeOnAClaimedNode(t *testing.T) {
	r := besideRig(t, 2)
	r.cleanCycle()
	u := nodeUUID(0)
	claim := "c0ffee00-0000-4000-8000-0000000000bb"
	if err := r.fake.Allocate(claim, u, map[string]int64{goldRC: 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes[0].Fault = "power failure"; s.nodes[0].ResourceClass = "baremetal-silver" })
	const silver = "CUSTOM_BAREMETAL_SILVER"
	for i := range 3 {
		rep := r.cycle()
		if len(rep.Errors) > 0 || rep.Nova.Occupied != 1 {
			t.Fatalf("cycle %d: errors %+v, nova %+v", i, rep.Errors, rep.Nova)
		}
		if s := r.provider(u).Inventories[silver]; s.Reserved != s.Total {
			t.Fatalf("cycle %d: claimed node offered under its new class: %+v", i, s)
		}
	}
	if err := r.fake.Allocate(claim, u, map[string]int64{}); err != nil {
		t.Fatal(err)
	}
	r.cleanCycle()
	c, _ := r.fake.Consumer(engine.HoldConsumer(r.ownerT, u))
	if inv := r.provider(u).Inventories; len(inv) != 1 || c.Allocations[u][silver] != 1 {
		t.Fatalf("after the claim left: inventory %+v, hold %v", inv, c.Allocations)
	}
}
