package engine_test

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

const goldRC = "CUSTOM_BAREMETAL_GOLD"

// ownHold says whether an /allocations path names one of this engine's
// hold consumers: beside nova, the only consumers it may touch.
func (r *rig) ownHold(path string) bool {
	c := strings.TrimPrefix(path, "/allocations/")
	for _, p := range r.fake.ProviderUUIDs() {
		if engine.HoldConsumer(r.ownerT, p) == c {
			return true
		}
	}
	return false
}

func besideRig(t *testing.T, nodes int) *rig {
	r := newRig(t, nodes)
	r.pol.Nova = engine.Beside{Enabled: true, HoldProject: "rpengine-hold-test", HoldUser: "rpengine-hold-test"}
	r.restart()
	return r
}

// nova is what nova-compute's Ironic driver would write at a refresh:
// reserved by its own rule, and the traits it owns (here: it strips the
// owner marker, as without a provider config).
func (r *rig) novaRewrites(uuid string, reserved int64, stripMarker bool) {
	r.t.Helper()
	if err := r.fake.SetReserved(uuid, goldRC, reserved); err != nil {
		r.t.Fatal(err)
	}
	if stripMarker {
		if err := r.fake.RemoveTrait(uuid, r.ownerT); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rig) held(uuid string) bool {
	c, ok := r.fake.Consumer(engine.HoldConsumer(r.ownerT, uuid))
	return ok && c.Type == engine.HoldConsumerType && c.Project == "rpengine-hold-test" &&
		c.Allocations[uuid][goldRC] == 1 && len(c.Allocations) == 1
}

// Beside nova, the inventory follows nova's rule and the stricter
// conditions become holds; nova's rewrite of the same values is then a
// no-op for both, and each condition's end releases its hold.
func TestBesideNovaHoldsInsteadOfReserving(t *testing.T) {
	r := besideRig(t, 6)
	r.src.set(func(s *source) {
		s.nodes[0].Retired = true                  // nova 0, engine: hold
		s.nodes[1].Fault = "power failure"         // nova 0, engine: hold
		s.nodes[2].TargetProvisionState = "active" // nova 0, engine: hold
		s.nodes[3].Maintenance = true              // both reserve
		s.nodes[4].InstanceUUID = "i-4"            // both reserve
	})
	rep := r.cleanCycle()
	if rep.Nova == nil || rep.Nova.Placed != 3 || rep.Nova.Held != 3 {
		t.Fatalf("first cycle: %+v", rep.Nova)
	}
	for i, want := range []struct {
		reserved int64
		hold     bool
	}{{0, true}, {0, true}, {0, true}, {1, false}, {1, false}, {0, false}} {
		u := nodeUUID(i)
		if got := r.reserved(u); got != want.reserved || r.held(u) != want.hold {
			t.Errorf("node %d: reserved %d held %v, want %d %v", i, got, r.held(u), want.reserved, want.hold)
		}
	}
	// A hold bumps its provider's generation: the next cycle re-reads the
	// three once (no write). Then idle: the owner listing and the hold
	// project's usage, nothing else.
	if rep = r.cleanCycle(); rep.Updated != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("cycle after the holds: %+v", rep)
	}
	rep = r.cleanCycle()
	if rep.Updated+rep.Created != 0 || rep.Nova.Placed+rep.Nova.Released+rep.Nova.Scanned != 0 || rep.PlacementRequests != 2 {
		t.Fatalf("idle cycle: %+v %+v", rep, rep.Nova)
	}
	// nova re-reads and writes its own values: identical, so no writes
	// from the engine either, and no foreign rewrite counted.
	for i := range 6 {
		r.novaRewrites(nodeUUID(i), map[bool]int64{true: 1}[i == 3 || i == 4], false)
	}
	if rep = r.cleanCycle(); rep.Updated != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("after nova's identical rewrite: updated %d, foreign %d", rep.Updated, rep.ForeignRewrites)
	}
	// The conditions end: holds go, and only ours.
	r.fake.Allocate("a1111111-0000-4000-8000-000000000004", nodeUUID(4), map[string]int64{goldRC: 1})
	r.src.set(func(s *source) { s.nodes[1].Fault, s.nodes[2].TargetProvisionState = "", "" })
	rep = r.cleanCycle()
	if rep.Nova.Released != 2 || rep.Nova.Held != 1 || r.held(nodeUUID(1)) || r.held(nodeUUID(2)) || !r.held(nodeUUID(0)) {
		t.Fatalf("after the conditions ended: %+v", rep.Nova)
	}
	if _, ok := r.fake.Consumer("a1111111-0000-4000-8000-000000000004"); !ok {
		t.Fatal("an instance's allocation was touched")
	}
}

// The book is rebuilt from Placement: a new process finds the holds of the
// last one (no duplicate, no write), and a hold deleted behind its back
// (nova-manage placement audit --delete) is found and put back.
func TestHoldsAreDerivedFromPlacement(t *testing.T) {
	r := besideRig(t, 4)
	r.src.set(func(s *source) { s.nodes[0].Retired, s.nodes[1].Fault = true, "x" })
	r.cleanCycle()
	r.restart() // a new process: empty book
	rep := r.cleanCycle()
	if rep.Nova.Placed != 0 || rep.Nova.Held != 2 || rep.Nova.Scanned != 2 {
		t.Fatalf("new process: %+v", rep.Nova)
	}
	if !r.fake.DropConsumer(engine.HoldConsumer(r.ownerT, nodeUUID(1))) {
		t.Fatal("no hold to drop")
	}
	rep = r.cleanCycle()
	if rep.Nova.Placed != 1 || !r.held(nodeUUID(1)) {
		t.Fatalf("after the hold was deleted: %+v", rep.Nova)
	}
	// A crash after the node healed leaves a stale hold: a new process
	// finds it by the full scan and releases it.
	r.src.set(func(s *source) { s.nodes[1].Fault = "" })
	r.restart()
	r.eng = engine.New(r.src, r.pc, r.pol, r.opts, r.state, nil)
	rep = r.cleanCycle()
	if rep.Nova.Released != 1 || r.held(nodeUUID(1)) || !r.held(nodeUUID(0)) {
		t.Fatalf("stale hold after a restart: %+v", rep.Nova)
	}
}

// A node whose unit an instance already uses needs no hold: Placement
// refuses it for capacity, and that is not an error.
func TestHoldOnOccupiedNode(t *testing.T) {
	r := besideRig(t, 2)
	r.cleanCycle()
	r.fake.Allocate("a1111111-0000-4000-8000-000000000001", nodeUUID(0), map[string]int64{goldRC: 1})
	r.src.set(func(s *source) { s.nodes[0].Fault = "x" })
	rep := r.cleanCycle()
	if rep.Nova.Occupied != 1 || rep.Nova.Held != 0 || r.held(nodeUUID(0)) {
		t.Fatalf("occupied node: %+v", rep.Nova)
	}
}

// Without the provider config nova strips the marker and resets reserved:
// the engine writes them back and counts each rewrite, so a fight shows.
func TestForeignRewritesCounted(t *testing.T) {
	r := newRig(t, 4) // alone: reserved by the engine's matrix
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cleanCycle()
	r.novaRewrites(nodeUUID(0), 0, true)
	r.novaRewrites(nodeUUID(1), 0, true)
	rep := r.cleanCycle()
	if rep.ForeignRewrites != 2 || r.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("after nova's rewrite: foreign %d, reserved %d", rep.ForeignRewrites, r.reserved(nodeUUID(0)))
	}
	if rep = r.cleanCycle(); rep.ForeignRewrites != 0 {
		t.Fatalf("quiet cycle counted %d rewrites", rep.ForeignRewrites)
	}
	// A change the engine agrees with is not a rewrite.
	r.src.set(func(s *source) { s.nodes[2].Maintenance = true })
	r.novaRewrites(nodeUUID(2), 1, false)
	if rep = r.cleanCycle(); rep.ForeignRewrites != 0 || rep.Updated != 0 {
		t.Fatalf("agreeing change: foreign %d, updated %d", rep.ForeignRewrites, rep.Updated)
	}
}

// A quarantined node (bad data) keeps its hold; a node out of the listing
// gives it up, so its provider can be deleted on proof.
func TestHoldKeptForQuarantinedNode(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Fault, s.nodes[1].Fault = "x", "y" })
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[0].ResourceClass = "" // quarantined
		s.nodes = []hostabi.Node{s.nodes[0], s.nodes[2]}
	})
	rep := r.cycle()
	if !r.held(nodeUUID(0)) || r.held(nodeUUID(1)) || rep.Nova.Released != 1 {
		t.Fatalf("quarantined keeps, unlisted releases: %+v", rep.Nova)
	}
}

func TestHoldConsumerIsStableAndDistinct(t *testing.T) {
	a := engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(1))
	if a != engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(1)) ||
		a == engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_B", nodeUUID(1)) ||
		a == engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(2)) {
		t.Fatal("hold consumer not a function of (engine, node)")
	}
	if len(a) != 36 || a[14] != '5' {
		t.Fatalf("not a version-5 uuid: %s", a)
	}
}
