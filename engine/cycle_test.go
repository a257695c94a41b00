package engine_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

func TestFirstCycleCreatesEverythingSecondSendsOneRequest(t *testing.T) {
	r := newRig(t, 30)
	r.src.set(func(s *source) {
		s.nodes[1].Maintenance = true
		s.nodes[2].InstanceUUID = "inst-2"
		s.nodes[3].Traits = []string{"CUSTOM_GOLD"}
	})
	rep := r.cleanCycle()
	if rep.Created != 30 || rep.Nodes != 30 {
		t.Fatalf("report %+v", rep)
	}
	for i := range 30 {
		p := r.provider(nodeUUID(i))
		want := placementfake.Inventory{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
		if i == 1 || i == 2 {
			want.Reserved = 1
		}
		if p.Name != nodeUUID(i) || p.Inventories["CUSTOM_BAREMETAL_GOLD"] != want || len(p.Inventories) != 1 {
			t.Fatalf("provider %d: %+v", i, p)
		}
		if !slices.Contains(p.Traits, r.ownerT) || !slices.Contains(p.Traits, "COMPUTE_NODE") {
			t.Fatalf("provider %d traits %v", i, p.Traits)
		}
	}
	if !slices.Contains(r.provider(nodeUUID(3)).Traits, "CUSTOM_GOLD") {
		t.Fatal("node trait not written")
	}
	r.fake.ResetRequests()
	rep = r.cleanCycle()
	if got := len(r.fake.Requests()); got != 1 || rep.Unchanged != 30 || rep.PlacementRequests != 1 {
		t.Fatalf("idle cycle sent %d requests (report %+v), want exactly 1", got, rep)
	}
}

func TestNewProcessWithStateFileSendsOneRequest(t *testing.T) {
	r := newRig(t, 10)
	path := filepath.Join(t.TempDir(), "state.json")
	r.state, _ = engine.LoadState(path, "k")
	r.restart()
	r.cleanCycle()
	if err := r.state.Save(); err != nil {
		t.Fatal(err)
	}
	var err error
	if r.state, err = engine.LoadState(path, "k"); err != nil {
		t.Fatal(err)
	}
	r.restart() // negotiation happens here, outside the cycle
	r.fake.ResetRequests()
	r.cleanCycle()
	if got := len(r.fake.Requests()); got != 1 {
		t.Fatalf("restarted cycle sent %d requests, want 1", got)
	}
	// A cache for another endpoint or engine is ignored, not trusted.
	if _, err := engine.LoadState(path, "other"); err == nil {
		t.Fatal("a foreign state file must be refused")
	}
}

func TestLostStateCostsAReadNotAWrite(t *testing.T) {
	r := newRig(t, 5)
	r.cleanCycle()
	r.state, _ = engine.LoadState("", "")
	r.restart()
	r.fake.ResetRequests()
	rep := r.cleanCycle()
	if rep.Unchanged != 5 || len(r.fake.Find("PUT", "*")) != 0 || len(r.fake.Find("PUT", "/resource_providers/*/*")) != 0 {
		t.Fatalf("cold cycle wrote: %+v %v", rep, r.fake.Requests())
	}
}

func TestConflictStormConvergesWithinTheRetryBound(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[0].Maintenance = true })
	storm := r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Conflict: true, Times: 4})
	rep := r.cleanCycle()
	if storm.Fired() != 4 || rep.Conflicts != 4 || r.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("fired %d, conflicts %d, reserved %d", storm.Fired(), rep.Conflicts, r.reserved(nodeUUID(0)))
	}
}

func TestEndlessConflictsGiveUpAndSpareTheOthers(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[0].Maintenance, s.nodes[1].Maintenance = true, true })
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/" + nodeUUID(0) + "/inventories", Conflict: true})
	rep := r.cycle()
	if !errorsContain(rep.Errors, "gave up after 6 attempts") || r.reserved(nodeUUID(1)) != 1 {
		t.Fatalf("errors %v, other node reserved %d", rep.Errors, r.reserved(nodeUUID(1)))
	}
}

func TestForeignTraitAddedBetweenReadAndWriteSurvives(t *testing.T) {
	r := newRig(t, 1)
	r.cleanCycle()
	u := nodeUUID(0)
	r.src.set(func(s *source) { s.nodes[0].Traits = []string{"CUSTOM_NEW"} })
	// Another writer adds a trait and an aggregate after the engine's read
	// and before its write: the write must fail on the generation, and
	// the retry must keep both.
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/traits", Times: 1, Conflict: true})
	r.fake.AddTrait(u, "CUSTOM_OPERATOR")
	r.fake.AddAggregate(u, "0d7e3c2a-6b1f-4c1e-9d55-3f1c1e2b6a10")
	rep := r.cleanCycle()
	p := r.provider(u)
	if !slices.Contains(p.Traits, "CUSTOM_OPERATOR") || !slices.Contains(p.Traits, "CUSTOM_NEW") || len(p.Aggregates) != 1 {
		t.Fatalf("traits %v aggregates %v (report %+v)", p.Traits, p.Aggregates, rep)
	}
	// The node trait leaves; the operator's stays.
	r.src.set(func(s *source) { s.nodes[0].Traits = nil })
	r.cleanCycle()
	p = r.provider(u)
	if slices.Contains(p.Traits, "CUSTOM_NEW") || !slices.Contains(p.Traits, "CUSTOM_OPERATOR") {
		t.Fatalf("traits %v", p.Traits)
	}
}

func TestProviderDeletedOutOfBandIsRecreatedNextCycle(t *testing.T) {
	r := newRig(t, 4)
	r.cleanCycle()
	r.fake.DeleteProvider(nodeUUID(2))
	rep := r.cleanCycle()
	if rep.Created != 1 || r.reserved(nodeUUID(2)) != 0 {
		t.Fatalf("report %+v", rep)
	}
}

func TestProviderVanishingMidWriteIsRecreatedInTheSameCycle(t *testing.T) {
	r := newRig(t, 2)
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[0].Maintenance = true })
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Vanish: true, Times: 1})
	r.cleanCycle()
	if r.reserved(nodeUUID(0)) != 1 || !slices.Contains(r.provider(nodeUUID(0)).Traits, r.ownerT) {
		t.Fatalf("not recreated: %+v", r.provider(nodeUUID(0)))
	}
}

func TestFailedListingWritesNothing(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	r.src.set(func(s *source) { s.failNodes = errBoom; s.gone = map[string]bool{nodeUUID(0): true} })
	r.fake.ResetRequests()
	for range 3 {
		rep := r.cycle()
		if !errorsContain(rep.Errors, "no writes this cycle") {
			t.Fatalf("errors %v", rep.Errors)
		}
	}
	if n := len(r.fake.Requests()); n != 0 {
		t.Fatalf("a failed listing still sent %d Placement requests", n)
	}
}

func TestNodesAreListedBeforeInstances(t *testing.T) {
	r := newRig(t, 2)
	// An instance lands on node 1 after the node snapshot was taken: the
	// snapshot says free, the later instance list says occupied.
	r.src.duringNodes = func(s *source) {
		s.set(func(s *source) { s.instances = []hostabi.Instance{{UUID: "late", NodeUUID: nodeUUID(1)}} })
	}
	r.cleanCycle()
	if got := r.src.calls; !slices.Equal(got, []string{"nodes", "instances"}) {
		t.Fatalf("call order %v", got)
	}
	if r.reserved(nodeUUID(1)) != 1 {
		t.Fatal("the instance that landed during the node listing must reserve its node")
	}
}

func TestAdoptionOfUnownedAndRefusalOfForeignProviders(t *testing.T) {
	r := newRig(t, 3)
	r.fake.CreateProvider(nodeUUID(0), nodeUUID(0)) // e.g. left by a crash after POST
	r.fake.CreateProvider(nodeUUID(1), nodeUUID(1))
	r.fake.AddTrait(nodeUUID(1), "OWNER_NOVA")
	r.fake.CreateProvider("99999999-0000-4000-8000-000000000000", nodeUUID(2)) // name held by another uuid
	rep := r.cycle()
	if !slices.Contains(r.provider(nodeUUID(0)).Traits, r.ownerT) {
		t.Fatal("an unowned provider of our node must be adopted")
	}
	if p := r.provider(nodeUUID(1)); slices.Contains(p.Traits, r.ownerT) || len(p.Inventories) != 0 {
		t.Fatalf("nova's provider was modified: %+v", p)
	}
	if !errorsContain(rep.Errors, "owned by OWNER_NOVA") || !errorsContain(rep.Errors, "held by a provider with another uuid") {
		t.Fatalf("errors %v", rep.Errors)
	}
}

func TestUnknownStandardTraitDoesNotBlockTheNode(t *testing.T) {
	r := newRig(t, 1)
	r.src.set(func(s *source) { s.nodes[0].Traits = []string{"HW_CPU_X86_AVX2", "HW_FROM_A_NEWER_OS_TRAITS"} })
	r.cleanCycle()
	p := r.provider(nodeUUID(0))
	if !slices.Contains(p.Traits, "HW_CPU_X86_AVX2") || slices.Contains(p.Traits, "HW_FROM_A_NEWER_OS_TRAITS") || r.reserved(nodeUUID(0)) != 0 {
		t.Fatalf("traits %v inventory %v", p.Traits, p.Inventories)
	}
	if rep := r.cleanCycle(); rep.PlacementRequests != 1 || rep.Unchanged != 1 {
		t.Fatalf("the unknown trait keeps the node busy: %+v", rep)
	}
}

func TestARefusedTraitWriteDoesNotBlockTheReservation(t *testing.T) {
	r := newRig(t, 1)
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[0].Maintenance, s.nodes[0].Traits = true, []string{"CUSTOM_NEW"} })
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/traits", Status: 400})
	rep := r.cycle()
	if r.reserved(nodeUUID(0)) != 1 || !errorsContain(rep.Errors, "set_traits") {
		t.Fatalf("reserved %d, errors %v", r.reserved(nodeUUID(0)), rep.Errors)
	}
}
