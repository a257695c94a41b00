package engine_test

import (
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// A provider another engine owns is read once and then left alone while
// its generation holds: each later cycle costs one listing of that
// owner's providers, not five requests per provider. A change brings one
// more read; the owner letting go lets this engine take it.
func TestForeignOwnedProvidersCostNoRequestWhileUnchanged(t *testing.T) {
	const n = 20
	r := newRig(t, n)
	other := engine.OwnerTrait("other")
	for i := range n {
		if err := r.fake.CreateProvider(nodeUUID(i), nodeUUID(i)); err != nil {
			t.Fatal(err)
		}
		if err := r.fake.AddTrait(nodeUUID(i), other); err != nil {
			t.Fatal(err)
		}
	}
	first := r.cycle()
	if got := countKind(first.Errors, engine.ErrOwned); got != n {
		t.Fatalf("first cycle: %d owned errors, want %d: %v", got, n, first.ErrorMessages())
	}
	for range 2 {
		rep := r.cycle()
		if rep.PlacementRequests != 2 || countKind(rep.Errors, engine.ErrOwned) != n {
			t.Fatalf("unchanged foreign providers: %d requests (want 2: ours, theirs), %d owned errors",
				rep.PlacementRequests, countKind(rep.Errors, engine.ErrOwned))
		}
	}
	// One changes (the other engine wrote it): read again, still theirs.
	if err := r.fake.BumpGeneration(nodeUUID(3)); err != nil {
		t.Fatal(err)
	}
	if rep := r.cycle(); rep.PlacementRequests <= 2 || rep.PlacementRequests > 2+5 || countKind(rep.Errors, engine.ErrOwned) != n {
		t.Fatalf("one changed: %d requests (want 3 to 7), %v", rep.PlacementRequests, rep.ErrorMessages())
	}
	if rep := r.cycle(); rep.PlacementRequests != 2 {
		t.Fatalf("after the re-read: %d requests, want 2", rep.PlacementRequests)
	}
	// The other engine lets one go (its marker removed): this one adopts it.
	if err := r.fake.RemoveTrait(nodeUUID(5), other); err != nil {
		t.Fatal(err)
	}
	rep := r.cycle()
	if countKind(rep.Errors, engine.ErrOwned) != n-1 || rep.Updated != 1 {
		t.Fatalf("released provider not adopted: updated %d, %v", rep.Updated, rep.ErrorMessages())
	}
}

// A provider proven gone but over engine.delete_limit is fully reserved
// once; later cycles that list it at the generation the reservation left
// send nothing for it.
func TestBlockedReservedProvidersCostNoRequestWhileUnchanged(t *testing.T) {
	const n = 10
	r := newRig(t, n)
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:2]
		for i := 2; i < n; i++ {
			s.gone[nodeUUID(i)] = true
		}
	})
	r.cycle() // first proof
	rep := r.cycle()
	if rep.Blocked != n-2 || r.reserved(nodeUUID(4)) != 1 {
		t.Fatalf("second proof: blocked %d, reserved %d; %v", rep.Blocked, r.reserved(nodeUUID(4)), rep.ErrorMessages())
	}
	for range 2 {
		r.fake.ResetRequests()
		rep = r.cycle()
		if rep.PlacementRequests != 1 || rep.Blocked != n-2 {
			t.Fatalf("unchanged blocked providers: %d requests (want the listing alone), blocked %d: %v",
				rep.PlacementRequests, rep.Blocked, r.fake.Requests())
		}
	}
	// Another writer clears a reservation: the next cycle reserves it again.
	if err := r.fake.SetReserved(nodeUUID(4), "CUSTOM_BAREMETAL_GOLD", 0); err != nil {
		t.Fatal(err)
	}
	rep = r.cycle()
	if r.reserved(nodeUUID(4)) != 1 || rep.PlacementRequests != 3 {
		t.Fatalf("reservation undone: reserved %d after a cycle of %d requests (want 3: list, read, write)",
			r.reserved(nodeUUID(4)), rep.PlacementRequests)
	}
}

func countKind(errs []engine.Error, kind engine.ErrorKind) int {
	n := 0
	for _, e := range errs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
