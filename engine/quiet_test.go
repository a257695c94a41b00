package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
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

// scopeShrunk lists the first listed nodes of a fleet; the others exist
// out of scope, and each ConfirmDeleted call is counted.
type scopeShrunk struct {
	*source
	listed int
	asked  []int
}

func (s *scopeShrunk) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return slices.Clone(s.nodes[:s.listed]), nil
}

func (s *scopeShrunk) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	s.asked = append(s.asked, len(uuids))
	for _, u := range uuids {
		if s.gone[u] {
			deleted = append(deleted, u)
		} else {
			present = append(present, u)
		}
	}
	return deleted, present, nil
}

// A node proven present out of scope is asked about again only once
// engine.delete_grace has passed, not every cycle; a node proven gone is
// asked every cycle until its provider is deleted.
func TestPresentNodesAreAskedAboutOncePerGrace(t *testing.T) {
	r := newRig(t, 6)
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r.opts.DeleteGrace, r.opts.Clock, r.opts.DeleteLimit = time.Minute, clock, 1
	src := &scopeShrunk{source: r.src, listed: 6}
	r.eng = engine.New(src, r.pc, r.pol, r.opts, r.state, nil)
	r.cleanCycle()
	src.listed = 2 // 2-5 leave the scope; 5 is then deleted
	rep := r.cycle()
	if !slices.Equal(src.asked, []int{4}) || rep.Outcomes[2].Reason != engine.ReasonNodePresent {
		t.Fatalf("first unlisted cycle asked %v; %+v", src.asked, rep.Outcomes)
	}
	clock.add(30 * time.Second)
	rep = r.cycle()
	if !slices.Equal(src.asked, []int{4}) || len(rep.Outcomes) != 6 || rep.Outcomes[2].Reason != engine.ReasonNodePresent {
		t.Fatalf("within the grace: asked %v; %+v", src.asked, rep.Outcomes)
	}
	clock.add(31 * time.Second)
	src.gone[nodeUUID(5)] = true
	r.cycle()
	if !slices.Equal(src.asked, []int{4, 4}) {
		t.Fatalf("after the grace: asked %v", src.asked)
	}
	clock.add(40 * time.Second)
	rep = r.cycle() // 5 asked again (pending), the others not
	if !slices.Equal(src.asked, []int{4, 4, 1}) || rep.Outcomes[5].Kind != engine.KindPendingDeletion {
		t.Fatalf("second proof within the grace: asked %v; %+v", src.asked, rep.Outcomes[5])
	}
	clock.add(30 * time.Second)
	rep = r.cycle() // a grace after the others' last answer: all asked
	if !slices.Equal(src.asked, []int{4, 4, 1, 4}) || rep.Deleted != 1 {
		t.Fatalf("third proof: asked %v, deleted %d: %v", src.asked, rep.Deleted, rep.ErrorMessages())
	}
}

// A cycle lists the changes of its first MaxChangeLists changed
// providers and counts the others: a cold run over a large fleet keeps a
// bounded report. Every provider still has its outcome.
func TestChangeListsAreBoundedPerCycle(t *testing.T) {
	n := engine.MaxChangeLists + 30
	r := newRig(t, n)
	rep := r.cleanCycle()
	listed := 0
	for _, o := range rep.Outcomes {
		if len(o.Changes) > 0 {
			listed++
		}
	}
	if rep.Created != n || len(rep.Outcomes) != n || listed != engine.MaxChangeLists || rep.ChangesOmitted != 30 {
		t.Fatalf("created %d, %d outcomes, %d with changes, %d omitted", rep.Created, len(rep.Outcomes), listed, rep.ChangesOmitted)
	}
	if rep = r.cleanCycle(); rep.ChangesOmitted != 0 {
		t.Fatalf("idle cycle: %d omitted", rep.ChangesOmitted)
	}
}

// A provider of a node proven gone that still has allocations is fully
// reserved and blocked; while its generation holds it costs no request
// until engine.delete_grace has passed since it was found in use. Freeing
// the allocation does not move the generation (DELETE /allocations), so it
// is deleted at the first look after the grace.
func TestBlockedInUseProvidersCostNoRequestWithinGrace(t *testing.T) {
	const n = 4
	r := newRig(t, n)
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r.opts.DeleteGrace, r.opts.Clock, r.opts.DeleteLimit = time.Minute, clock, 1
	r.restart()
	r.cleanCycle()
	u, consumer := nodeUUID(2), "c0ffee00-0000-4000-8000-000000000002"
	if err := r.fake.Allocate(consumer, u, map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes = append(s.nodes[:2:2], s.nodes[3]); s.gone[u] = true })
	r.cycle() // first proof
	clock.add(time.Minute)
	rep := r.cycle() // second proof: in use, so reserved and blocked
	if rep.Blocked != 1 || r.reserved(u) != 1 {
		t.Fatalf("second proof: blocked %d, reserved %d: %v", rep.Blocked, r.reserved(u), rep.ErrorMessages())
	}
	for range 2 {
		clock.add(20 * time.Second)
		if rep = r.cycle(); rep.PlacementRequests != 1 || rep.Blocked != 1 || !errorsContain(rep.Errors, msgInUse) {
			t.Fatalf("within the grace: %d requests (want the listing alone), blocked %d: %v",
				rep.PlacementRequests, rep.Blocked, rep.ErrorMessages())
		}
	}
	if !r.fake.DropConsumer(consumer) { // the generation does not move
		t.Fatal("no allocation to drop")
	}
	clock.add(10 * time.Second)
	if rep = r.cycle(); rep.PlacementRequests != 1 || rep.Deleted != 0 {
		t.Fatalf("freed within the grace: %d requests, deleted %d", rep.PlacementRequests, rep.Deleted)
	}
	clock.add(10 * time.Second) // a grace since it was found in use
	if rep = r.cycle(); rep.Deleted != 1 || rep.Blocked != 0 {
		t.Fatalf("after the grace: deleted %d, blocked %d: %v", rep.Deleted, rep.Blocked, rep.ErrorMessages())
	}
	if _, ok := r.fake.Provider(u); ok {
		t.Fatal("provider still there")
	}
}

const msgInUse = "has allocations; reserved, not deleted"
