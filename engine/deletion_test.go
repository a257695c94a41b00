package engine_test

import (
	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"testing"
)

func TestProvidersOfUnlistedNodesNeedTwoProofs(t *testing.T) {
	r := newRig(t, 4)
	r.cleanCycle()
	gone := nodeUUID(3)
	r.src.set(func(s *source) { s.nodes = s.nodes[:3] })
	// Unlisted but not proven deleted (moved out of scope, say): kept.
	r.cleanCycle()
	r.provider(gone)
	r.src.set(func(s *source) { s.gone[gone] = true })
	if rep := r.cleanCycle(); rep.Deleted != 0 {
		t.Fatal("one proof must not be enough")
	}
	r.provider(gone)
	if rep := r.cleanCycle(); rep.Deleted != 1 {
		t.Fatalf("second proof: report %+v", rep)
	}
	if _, ok := r.fake.Provider(gone); ok {
		t.Fatal("provider still there")
	}
}

func TestProviderWithAllocationsIsReservedNotDeleted(t *testing.T) {
	r := newRig(t, 2)
	r.cleanCycle()
	u := nodeUUID(1)
	if err := r.fake.Allocate("c0ffee00-0000-4000-8000-000000000001", u, map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes = s.nodes[:1]; s.gone[u] = true })
	r.cycle()
	rep := r.cycle()
	if rep.Deleted != 0 || !errorsContain(rep.Errors, "has allocations; reserved, not deleted") || r.reserved(u) != 1 {
		t.Fatalf("report %+v reserved %d", rep, r.reserved(u))
	}
	if p := r.provider(u); p.Usages["CUSTOM_BAREMETAL_GOLD"] != 1 {
		t.Fatalf("allocation lost: %+v", p)
	}
}

func TestMassDeletionIsRefused(t *testing.T) {
	r := newRig(t, 10)
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes = nil // a broken source: everything "proven" gone
		for i := range 10 {
			s.gone[nodeUUID(i)] = true
		}
	})
	r.cycle()
	rep := r.cycle()
	if rep.Deleted != 0 || !errorsContain(rep.Errors, "over the limit") || len(r.fake.ProviderUUIDs()) != 10 {
		t.Fatalf("report %+v, providers left %d", rep, len(r.fake.ProviderUUIDs()))
	}
}

func TestResourceClassChangeOnOccupiedNodeKeepsTheOldClassReserved(t *testing.T) {
	r := newRig(t, 1)
	r.cleanCycle()
	u := nodeUUID(0)
	consumer := "c0ffee00-0000-4000-8000-000000000002"
	if err := r.fake.Allocate(consumer, u, map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes[0].ResourceClass = "baremetal-silver" })
	rep := r.cleanCycle()
	p := r.provider(u)
	gold, silver := p.Inventories["CUSTOM_BAREMETAL_GOLD"], p.Inventories["CUSTOM_BAREMETAL_SILVER"]
	if gold.Reserved != gold.Total || silver.Total != 1 || p.Usages["CUSTOM_BAREMETAL_GOLD"] != 1 {
		t.Fatalf("inventories %+v usages %v report %+v", p.Inventories, p.Usages, rep)
	}
	// Once the allocation is gone the old class goes too.
	if err := r.fake.Allocate(consumer, u, map[string]int64{}); err != nil {
		t.Fatal(err)
	}
	r.cleanCycle()
	p = r.provider(u)
	if _, still := p.Inventories["CUSTOM_BAREMETAL_GOLD"]; still || len(p.Inventories) != 1 {
		t.Fatalf("old class kept after it was freed: %+v", p.Inventories)
	}
}

func TestDeletionProofsMustBeInConsecutiveCycles(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	gone := nodeUUID(2)
	r.src.set(func(s *source) { s.nodes = s.nodes[:2]; s.gone[gone] = true })
	r.cleanCycle() // first proof
	r.src.set(func(s *source) { s.failNodes = errBoom })
	r.cycle() // a failed listing: this cycle proves nothing
	r.src.set(func(s *source) { s.failNodes = nil })
	if rep := r.cleanCycle(); rep.Deleted != 0 {
		t.Fatal("two proofs with a gap between them deleted the provider")
	}
	if rep := r.cleanCycle(); rep.Deleted != 1 {
		t.Fatalf("two consecutive proofs must delete: %+v", rep)
	}
}

// A provider of a node proven gone that Placement refuses to delete, for
// any reason (here a child provider: 409 cannot_delete_parent), is fully
// reserved in the cycle that finds it, and deleted once it can be.
func TestBlockedDeletionIsReservedInTheSameCycle(t *testing.T) {
	r := newRig(t, 3)
	r.cleanCycle()
	u := nodeUUID(2)
	r.src.set(func(s *source) { s.nodes = s.nodes[:2]; s.gone[u] = true })
	r.cycle() // first proof
	refuse := r.fake.Inject(placementfake.Fault{Method: "DELETE", Path: "/resource_providers/" + u, Status: 409})
	rep := r.cycle()
	if rep.Deleted != 0 || rep.Blocked != 1 || r.reserved(u) != 1 || !errorsContain(rep.Errors, "reserved, not deleted") {
		t.Fatalf("report %+v reserved %d", rep, r.reserved(u))
	}
	refuse.Remove()
	if rep := r.cycle(); rep.Deleted != 1 || rep.Blocked != 0 {
		t.Fatalf("once the obstacle is gone: %+v", rep)
	}
	if _, ok := r.fake.Provider(u); ok {
		t.Fatal("provider still there")
	}
}

// Over engine.delete_limit nothing is deleted, and every provider proven
// gone is reserved instead of staying schedulable.
func TestOverDeleteLimitReservesTheProvenGone(t *testing.T) {
	r := newRig(t, 4)
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:1]
		for i := 1; i < 4; i++ {
			s.gone[nodeUUID(i)] = true
		}
	})
	r.cycle()
	rep := r.cycle()
	if rep.Deleted != 0 || rep.Blocked != 3 {
		t.Fatalf("report %+v", rep)
	}
	for i := 1; i < 4; i++ {
		if r.reserved(nodeUUID(i)) != 1 {
			t.Fatalf("node %d not reserved", i)
		}
	}
}

// After a plugin swap, the old plugin's providers are kept: the new
// plugin's "gone" is no proof for nodes it never listed. The old plugin,
// back, proves them gone as usual.
func TestAnotherPluginCannotProveAProviderGone(t *testing.T) {
	r := newRig(t, 3)
	r.opts.Plugin = "ironic"
	r.restart()
	r.cleanCycle()
	r.opts.Plugin = "vmware"
	r.restart()
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:2]
		s.gone[nodeUUID(2)] = true
	})
	for range 3 {
		if rep := r.cycle(); rep.Deleted != 0 || len(rep.Warnings) == 0 {
			t.Fatalf("another plugin's proof deleted or went unreported: %+v", rep)
		}
	}
	r.opts.Plugin = "ironic"
	r.restart()
	r.cycle()
	if rep := r.cycle(); rep.Deleted != 1 {
		t.Fatalf("the plugin that wrote it, back: %+v", rep)
	}
}
