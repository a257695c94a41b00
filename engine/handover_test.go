package engine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// An engine whose write is delayed past a hand-over must not win the
// provider back when its write conflicts: the re-read shows the new
// owner, and it stops there.
func TestConflictAfterHandOverLeavesTheProviderToTheNewOwner(t *testing.T) {
	a := newRig(t, 1)
	a.cleanCycle()
	b := &rig{t: t, fake: a.fake, src: a.src, opts: a.opts, ownerT: engine.OwnerTrait("other")}
	b.pol = engine.Policy{OwnerTrait: b.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
		MayTakeOver: func(owner string) bool { return owner == a.ownerT }}
	b.state, _ = engine.LoadState("", "")
	b.restart()

	a.src.set(func(s *source) { s.nodes[0].Maintenance = true })
	slow := a.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Times: 1, Delay: 500 * time.Millisecond})
	done := make(chan engine.Report)
	go func() { done <- a.cycle() }()
	for deadline := time.Now().Add(10 * time.Second); slow.Fired() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the old owner's write never reached Placement")
		}
	}
	if rep := b.cycle(); len(rep.Errors) > 0 || rep.Updated != 1 {
		t.Fatalf("takeover: %+v", rep)
	}
	rep := <-done
	p := a.provider(nodeUUID(0))
	if slices.Contains(p.Traits, a.ownerT) || !slices.Contains(p.Traits, b.ownerT) {
		t.Fatalf("traits after the late write: %v", p.Traits)
	}
	if !errorsContain(rep.Errors, "taken over by "+b.ownerT) {
		t.Fatalf("old owner's report: %+v", rep)
	}
}
