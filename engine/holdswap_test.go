package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// One hold deleted as DELETE /allocations does it (its provider's
// generation stays) and another allocation of the hold project's class
// planted on a node that needs none: the hold project's usage total is
// unchanged, yet the next cycle finds the held node with room and holds it
// again. Idle cycles around it send the two requests they always did.
func TestHoldSwapIsRepaired(t *testing.T) {
	r := besideRig(t, 4)
	r.src.set(func(s *source) { s.nodes[0].Retired, s.nodes[1].Fault = true, "x" })
	r.cleanCycle()
	r.cleanCycle() // re-reads the held providers once, and checks their room
	if rep := r.cleanCycle(); rep.PlacementRequests != 2 || rep.Nova.Held != 2 {
		t.Fatalf("idle cycle with two holds: %d requests, %+v", rep.PlacementRequests, rep.Nova)
	}
	held := nodeUUID(0)
	gen := r.provider(held).Generation
	if !r.fake.DropConsumer(engine.HoldConsumer(r.ownerT, held)) {
		t.Fatal("no hold to drop")
	}
	if g := r.provider(held).Generation; g != gen {
		t.Fatalf("dropping the hold moved its provider's generation %d -> %d; the real Placement's does not", gen, g)
	}
	planted := "b2222222-0000-4000-8000-000000000003"
	if err := r.fake.AllocateAs(planted, "rpengine-hold-test", "rpengine-hold-test", nodeUUID(3), map[string]int64{goldRC: 1}); err != nil {
		t.Fatal(err)
	}
	if used, err := r.pc.ProjectUsage(context.Background(), "rpengine-hold-test", "rpengine-hold-test"); err != nil || used != 2 {
		t.Fatalf("hold project's usage after the swap: %d, %v; want 2 (unchanged)", used, err)
	}
	rep := r.cleanCycle()
	if rep.Nova.Placed != 1 || rep.Nova.Held != 2 || !r.held(held) || !r.held(nodeUUID(1)) {
		t.Fatalf("cycle after the swap: %+v, node 0 held %v", rep.Nova, r.held(held))
	}
	if _, ok := r.fake.Consumer(planted); !ok {
		t.Fatal("the planted allocation was touched")
	}
	// While the planted allocation stays, the total is one over the book,
	// and each cycle reads the holds back, as before this check. Once it
	// goes: one cycle reads node 0 after its reshape, then idle again.
	r.fake.DropConsumer(planted)
	r.cleanCycle()
	if rep = r.cleanCycle(); rep.PlacementRequests != 2 || rep.Nova.Held != 2 {
		t.Fatalf("idle cycle after the repair: %d requests, %+v; want 2 requests", rep.PlacementRequests, rep.Nova)
	}
}

// Nothing moved, nothing read: a generation moved anywhere in the listing
// (here nova's instance on an unheld node) costs one listing per hold
// class, once, and no write.
func TestHoldRoomCheckedOnlyAfterAChange(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cleanCycle()
	r.cleanCycle()
	before := roomListings(r)
	for range 3 {
		if rep := r.cleanCycle(); rep.PlacementRequests != 2 {
			t.Fatalf("idle cycle: %d requests, want 2", rep.PlacementRequests)
		}
	}
	if n := roomListings(r) - before; n != 0 {
		t.Fatalf("idle cycles listed room %d times", n)
	}
	if err := r.fake.Allocate("a1111111-0000-4000-8000-000000000002", nodeUUID(2), map[string]int64{goldRC: 1}); err != nil {
		t.Fatal(err)
	}
	rep := r.cleanCycle()
	if n := roomListings(r) - before; n != 1 || rep.Nova.Placed != 0 || rep.Updated != 0 {
		t.Fatalf("after an instance landed: %d room listings, %+v, updated %d", n, rep.Nova, rep.Updated)
	}
	if rep = r.cleanCycle(); rep.PlacementRequests != 2 {
		t.Fatalf("idle again: %d requests, want 2", rep.PlacementRequests)
	}
}

// roomListings counts the engine's listings of providers with room.
func roomListings(r *rig) int {
	n := 0
	for _, q := range r.fake.Find("GET", "/resource_providers") {
		if strings.Contains(q.Query, "resources=") {
			n++
		}
	}
	return n
}

// A new process compares the listing with the generations in its record:
// a swap made while no engine ran is found at its first cycle, and an
// idle first cycle sends nothing more.
func TestHoldSwapFoundByANewProcess(t *testing.T) {
	r := besideRig(t, 4)
	r.src.set(func(s *source) { s.nodes[1].Retired = true })
	r.cleanCycle()
	r.cleanCycle()
	r.restart()
	r.cleanCycle() // GET / once: this rig's new client has no recorded microversion
	r.restart()
	before := roomListings(r)
	if rep := r.cleanCycle(); rep.PlacementRequests != 3 || roomListings(r) != before {
		t.Fatalf("idle first cycle of a new process: %d requests, %d room listings", rep.PlacementRequests, roomListings(r)-before)
	}
	r.fake.DropConsumer(engine.HoldConsumer(r.ownerT, nodeUUID(1)))
	if err := r.fake.AllocateAs("b2222222-0000-4000-8000-000000000002", "rpengine-hold-test", "rpengine-hold-test", nodeUUID(2), map[string]int64{goldRC: 1}); err != nil {
		t.Fatal(err)
	}
	r.restart()
	if rep := r.cleanCycle(); rep.Nova.Placed != 1 || !r.held(nodeUUID(1)) {
		t.Fatalf("new process after a swap: %+v", rep.Nova)
	}
}
