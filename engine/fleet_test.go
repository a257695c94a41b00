package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// fleetRigs are two engines beside nova sharing one fleet marker, one
// hold project and one record store, dividing the nodes into two
// partitions: a holds 0, b holds 1.
func fleetRigs(t testing.TB, nodes int) (a, b *rig, store *memStore) {
	a = newRig(t, nodes)
	store = &memStore{entries: map[string][]byte{}}
	fleetPolicy := func(r *rig, user string, held ...int) {
		r.ownerT = engine.OwnerTrait("fleet-test")
		r.pol = engine.Policy{OwnerTrait: r.ownerT, FleetMarker: true, MarkerTraits: []string{"COMPUTE_NODE"},
			Scope: engine.Scope{Partitions: 2, Held: held},
			Nova:  engine.Beside{Enabled: true, HoldProject: "rpengine-hold-fleet", HoldUser: user}}
		r.restart()
		r.eng.ShareRecord(store, false)
	}
	fleetPolicy(a, "hold-a", 0)
	b = &rig{t: t, fake: a.fake, src: a.src, opts: a.opts}
	b.state, _ = engine.LoadState("", "")
	fleetPolicy(b, "hold-b", 1)
	return a, b, store
}

// inPartition lists the node indexes of partition p of 2.
func inPartition(nodes, p int) []int {
	var out []int
	for i := range nodes {
		if engine.Partition(nodeUUID(i), 2) == p {
			out = append(out, i)
		}
	}
	return out
}

// fleetHeld says whether node i carries the fleet's hold, and by whom.
func fleetHeld(r *rig, i int) (held bool, user string) {
	c, ok := r.fake.Consumer(engine.HoldConsumer(r.ownerT, nodeUUID(i)))
	ok = ok && c.Project == "rpengine-hold-fleet" && c.Allocations[nodeUUID(i)][goldRC] == 1
	return ok, c.User
}

// With a fleet marker each engine manages the providers of its own
// partitions only: the same marker on all, and neither touches the
// other's.
func TestFleetMarkerDividesByPartition(t *testing.T) {
	a, b, _ := fleetRigs(t, 12)
	mine, theirs := inPartition(12, 0), inPartition(12, 1)
	if len(mine) == 0 || len(theirs) == 0 {
		t.Fatalf("partitions %v %v: pick another fleet size", mine, theirs)
	}
	if rep := a.cleanCycle(); rep.Created != len(mine) {
		t.Fatalf("a created %d, want %d", rep.Created, len(mine))
	}
	if rep := b.cleanCycle(); rep.Created != len(theirs) || rep.Updated != 0 {
		t.Fatalf("b: created %d updated %d, want %d and 0", rep.Created, rep.Updated, len(theirs))
	}
	for i := range 12 {
		if p := a.provider(nodeUUID(i)); !slices.Contains(p.Traits, a.ownerT) {
			t.Errorf("node %d: traits %v lack the fleet marker", i, p.Traits)
		}
	}
	// A node of each partition changes, and one of b's is deleted: a
	// writes its own change and nothing of b's (not the deleted node's
	// provider either: reserving or deleting it is b's).
	gone := theirs[1]
	a.src.set(func(s *source) {
		s.nodes[mine[0]].Maintenance = true
		s.nodes[theirs[0]].Maintenance = true
		s.nodes = slices.DeleteFunc(s.nodes, func(n hostabi.Node) bool { return n.UUID == nodeUUID(gone) })
		s.gone[nodeUUID(gone)] = true
	})
	before := len(a.fake.Requests())
	for range 2 { // two proofs: a would delete it in the second
		if rep := a.cleanCycle(); rep.Deleted != 0 || rep.Blocked != 0 {
			t.Fatalf("a: %+v", rep)
		}
	}
	for _, req := range a.fake.Requests()[before:] {
		if req.Method != "GET" && slices.ContainsFunc(theirs, func(i int) bool { return containsUUID(req.Path, nodeUUID(i)) }) {
			t.Errorf("a wrote b's provider: %s %s", req.Method, req.Path)
		}
	}
	if a.reserved(nodeUUID(mine[0])) != 1 || a.reserved(nodeUUID(theirs[0])) != 0 {
		t.Errorf("reserved: a's node %d, b's node %d; want 1 and 0", a.reserved(nodeUUID(mine[0])), a.reserved(nodeUUID(theirs[0])))
	}
}

// A departed engine's holds move with its nodes: the engine taking its
// partition adopts the holds still wanted (the same consumer, written
// again under its own user: no window, not refused as occupied) and
// releases the one whose node left its hold condition meanwhile.
func TestFleetHoldsMoveWithTheirNodes(t *testing.T) {
	a, b, store := fleetRigs(t, 12)
	mine := inPartition(12, 0)
	a.src.set(func(s *source) {
		for _, i := range mine[:3] {
			s.nodes[i].Retired = true // nova leaves it schedulable: a hold
		}
	})
	if rep := a.cleanCycle(); rep.Nova == nil || rep.Nova.Placed != 3 {
		t.Fatalf("a's holds: %+v", rep.Nova)
	}
	b.cleanCycle()
	// a dies; meanwhile one held node leaves its hold condition.
	a.src.set(func(s *source) { s.nodes[mine[0]].Retired = false })
	b.eng.SetScope(engine.Scope{Partitions: 2, Held: []int{0, 1}}, nil)
	b.eng.ShareRecord(store, true)
	rep := b.cleanCycle()
	if rep.Nova.Occupied != 0 || rep.Nova.Placed != 2 || rep.Nova.Released != 1 || rep.Nova.Held != 2 {
		t.Fatalf("take-over's holds: %+v", rep.Nova)
	}
	if held, _ := fleetHeld(b, mine[0]); held {
		t.Errorf("node %d left its hold condition but is still held", mine[0])
	}
	for _, i := range mine[1:3] {
		if held, user := fleetHeld(b, i); !held || user != "hold-b" {
			t.Errorf("node %d: held %v by %q, want adopted by hold-b", i, held, user)
		}
		if a.reserved(nodeUUID(i)) != 0 {
			t.Errorf("node %d: inventory reserved, want nova's 0 under the hold", i)
		}
	}
	// Converged: the book matches the usage, nothing is read back.
	if rep = b.cleanCycle(); rep.Nova.Scanned+rep.Nova.Placed+rep.Nova.Released != 0 || len(rep.Warnings) > 0 {
		t.Fatalf("after the take-over: %+v %v", rep.Nova, rep.Warnings)
	}
}

// A live hand-over (the partition moves to a peer) releases nothing: the
// old owner forgets the node and its hold, the new one adopts the hold,
// and the old one's count of its holds stays right throughout.
func TestFleetHandOverKeepsTheHold(t *testing.T) {
	a, b, _ := fleetRigs(t, 12)
	theirs := inPartition(12, 1)
	a.src.set(func(s *source) { s.nodes[theirs[0]].Retired = true })
	a.eng.SetScope(engine.Scope{Partitions: 2, Held: []int{0, 1}}, nil)
	b.eng.SetScope(engine.Scope{Partitions: 2}, nil)
	if rep := a.cleanCycle(); rep.Nova.Placed != 1 {
		t.Fatalf("a's hold: %+v", rep.Nova)
	}
	a.eng.SetScope(engine.Scope{Partitions: 2, Held: []int{0}}, nil)
	b.eng.SetScope(engine.Scope{Partitions: 2, Held: []int{1}}, nil)
	if rep := a.cleanCycle(); rep.Nova.Released != 0 || rep.Nova.Scanned != 0 || len(rep.Warnings) > 0 {
		t.Fatalf("a after handing over: %+v %v", rep.Nova, rep.Warnings)
	}
	if held, user := fleetHeld(a, theirs[0]); !held || user != "hold-a" {
		t.Fatalf("hold after the hand-over: %v %q", held, user)
	}
	if rep := b.cleanCycle(); rep.Nova.Placed != 1 || rep.Nova.Occupied != 0 {
		t.Fatalf("b's adoption: %+v", rep.Nova)
	}
	if held, user := fleetHeld(b, theirs[0]); !held || user != "hold-b" {
		t.Fatalf("hold after the adoption: %v %q", held, user)
	}
	if rep := a.cleanCycle(); len(rep.Warnings) > 0 || rep.Nova.Scanned != 0 {
		t.Fatalf("a after the adoption: %+v %v", rep.Nova, rep.Warnings)
	}
}

func containsUUID(path, uuid string) bool { return slices.Contains(strings.Split(path, "/"), uuid) }
