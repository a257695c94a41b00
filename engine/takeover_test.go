package engine_test

import (
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

func TestTakeOverFlipsTheOwnerMarkerAndFencesTheOldOwner(t *testing.T) {
	a := newRig(t, 3)
	a.cleanCycle()
	// Engine b shares the fake Placement and the fleet.
	b := &rig{t: t, fake: a.fake, src: a.src, opts: a.opts}
	b.ownerT = engine.OwnerTrait("other")
	b.pol = engine.Policy{OwnerTrait: b.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
		MayTakeOver: func(owner string) bool { return owner == a.ownerT }}
	b.state, _ = engine.LoadState("", "")
	b.restart()

	rep := b.cleanCycle()
	if rep.Created != 0 || rep.Updated != 3 {
		t.Fatalf("takeover report %+v", rep)
	}
	for i := range 3 {
		p := a.provider(nodeUUID(i))
		if slices.Contains(p.Traits, a.ownerT) || !slices.Contains(p.Traits, b.ownerT) {
			t.Fatalf("marker not flipped: %v", p.Traits)
		}
	}
	// a no longer owns them: it must not write them, and says why.
	a.fake.ResetRequests()
	rep = a.cycle()
	if len(a.fake.Find("PUT", "/resource_providers/*/*")) != 0 || !errorsContain(rep.Errors, "owned by "+b.ownerT) {
		t.Fatalf("old owner wrote or kept quiet: %+v", rep)
	}
	// Without permission nothing is taken.
	b.pol.MayTakeOver = nil
	b.restart()
	a.pol.MayTakeOver = nil
	if rep := a.cycle(); len(rep.Errors) != 3 {
		t.Fatalf("errors %v", rep.Errors)
	}
}
