package engine_test

import (
	"fmt"
	"testing"
)

// A hold whose node an instance occupies is refused once (GET consumer,
// PUT, GET usages) and then not asked for again while the node's
// generation stays and one listing of the providers with room for its
// class does not name it: N occupied holds cost one request per hold
// class a cycle, not three per node. The occupant leaving (DELETE
// /allocations, generation unchanged) puts the node in that listing, and
// the next cycle places its hold; no write leaves the others open.
func TestOccupiedHoldsCostOneListingPerClass(t *testing.T) {
	const n = 10
	r := besideRig(t, n)
	r.cleanCycle()
	for i := range n {
		if err := r.fake.Allocate(instanceUUID(i), nodeUUID(i), map[string]int64{goldRC: 1}); err != nil {
			t.Fatal(err)
		}
	}
	r.src.set(func(s *source) {
		for i := range n {
			s.nodes[i].Fault = "x"
		}
	})
	if rep := r.cleanCycle(); rep.Nova.Occupied != n || rep.Nova.Held != 0 {
		t.Fatalf("first cycle: %+v", rep.Nova)
	}
	windows := r.watchWindows(nodeUUID(1), nodeUUID(2), nodeUUID(3))
	r.cleanCycle() // re-reads the providers the refusals left unread, if any
	for range 3 {
		rep := r.cleanCycle()
		// ours, the hold project's usage, providers with room for gold
		if rep.PlacementRequests != 3 || rep.Nova.Occupied != n || rep.Nova.Placed != 0 {
			t.Fatalf("idle cycle with %d occupied holds: %d requests (want 3), %+v", n, rep.PlacementRequests, rep.Nova)
		}
	}
	if !r.fake.DropConsumer(instanceUUID(0)) {
		t.Fatal("no instance to drop")
	}
	rep := r.cleanCycle()
	if rep.Nova.Placed != 1 || rep.Nova.Occupied != n-1 || !r.held(nodeUUID(0)) {
		t.Fatalf("cycle after the occupant left: %+v, held %v", rep.Nova, r.held(nodeUUID(0)))
	}
	if len(*windows) > 0 {
		t.Fatalf("occupied nodes allocatable between writes: %v", *windows)
	}
}

func instanceUUID(i int) string { return fmt.Sprintf("a1111111-0000-4000-8000-%012d", i) }

// A refused hold whose node's generation moved is tried again (here one
// occupant replaced by another between two cycles: the unit never free
// at a listing, the new allocation moves the generation): refused again,
// three more requests once, then the listing alone.
func TestOccupiedHoldTriedAgainWhenItsGenerationMoves(t *testing.T) {
	r := besideRig(t, 3)
	r.cleanCycle()
	for i := range 2 {
		if err := r.fake.Allocate(instanceUUID(i), nodeUUID(i), map[string]int64{goldRC: 1}); err != nil {
			t.Fatal(err)
		}
	}
	r.src.set(func(s *source) { s.nodes[0].Fault, s.nodes[1].Fault = "x", "y" })
	r.cleanCycle()
	r.cleanCycle()
	if rep := r.cleanCycle(); rep.PlacementRequests != 3 || rep.Nova.Occupied != 2 {
		t.Fatalf("idle cycle with 2 occupied holds: %d requests, %+v", rep.PlacementRequests, rep.Nova)
	}
	r.fake.DropConsumer(instanceUUID(0))
	if err := r.fake.Allocate(instanceUUID(9), nodeUUID(0), map[string]int64{goldRC: 1}); err != nil {
		t.Fatal(err)
	}
	rep := r.cleanCycle()
	if rep.Nova.Occupied != 2 || rep.Nova.Placed != 0 || rep.PlacementRequests < 3+3 {
		t.Fatalf("after the occupant changed: %d requests (want the refusal's 3 more), %+v", rep.PlacementRequests, rep.Nova)
	}
	r.cleanCycle()
	if rep = r.cleanCycle(); rep.PlacementRequests != 3 {
		t.Fatalf("idle again: %d requests, want 3", rep.PlacementRequests)
	}
}
