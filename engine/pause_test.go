package engine_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// A paused provider keeps an operator's change for as many cycles as the
// pause lasts, is reported paused (overdue past its time), is never
// deleted, survives a restart from the state file; resume applies the
// rules in the next cycle.
func TestPauseKeepsAnOperatorsChange(t *testing.T) {
	r := newRig(t, 4)
	path := filepath.Join(t.TempDir(), "state.json")
	r.state, _ = engine.LoadState(path, "k")
	r.restart()
	r.cleanCycle()
	u := nodeUUID(1)
	if err := r.eng.Pause(context.Background(), u, time.Now().Add(time.Hour), "workaround for bug 2104040"); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.SetReserved(u, "CUSTOM_BAREMETAL_GOLD", 1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rep := r.cleanCycle()
		if r.reserved(u) != 1 || rep.Paused != 1 || rep.PausesOverdue != 0 {
			t.Fatalf("cycle %d: reserved %d, paused %d overdue %d: the operator's change was to stay", i, r.reserved(u), rep.Paused, rep.PausesOverdue)
		}
		if !slices.ContainsFunc(rep.Outcomes, func(o engine.Outcome) bool { return o.Node == u && o.Kind == engine.KindPaused }) {
			t.Fatalf("cycle %d: no paused outcome for %s", i, u)
		}
	}
	r.state, _ = engine.LoadState(path, "k") // a restart
	r.restart()
	if rep := r.cleanCycle(); r.reserved(u) != 1 || rep.Paused != 1 {
		t.Fatalf("after a restart: reserved %d, paused %d; the pause was to hold", r.reserved(u), rep.Paused)
	}
	r.src.set(func(s *source) { s.nodes = slices.Delete(s.nodes, 1, 2); s.gone[u] = true })
	for range 3 {
		r.cleanCycle()
	}
	if _, ok := r.fake.Provider(u); !ok {
		t.Fatal("a paused provider was deleted")
	}
	if err := r.eng.Resume(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	r.cycle()
	r.cycle()
	if _, ok := r.fake.Provider(u); ok {
		t.Fatal("resumed: the provider of the deleted node was to be deleted by its proofs")
	}
}

// The pause's time passed: still paused, reported overdue.
func TestPauseOverdue(t *testing.T) {
	r := newRig(t, 2)
	r.cleanCycle()
	clock := &stepClock{now: time.Now()}
	r.opts.Clock = clock
	r.restart()
	if err := r.eng.Pause(context.Background(), nodeUUID(0), clock.Now().Add(time.Minute), ""); err != nil {
		t.Fatal(err)
	}
	clock.add(2 * time.Minute)
	now := clock.Now()
	if rep := r.cleanCycle(); rep.Paused != 1 || rep.PausesOverdue != 1 {
		t.Fatalf("paused %d overdue %d, want 1 and 1", rep.Paused, rep.PausesOverdue)
	}
	if err := r.eng.Pause(context.Background(), nodeUUID(0), now.Add(-time.Second), ""); err == nil {
		t.Error("a pause ending in the past was taken")
	}
	if err := r.eng.Pause(context.Background(), "6a1b0c3e-0000-4000-8000-00000000abcd", now.Add(time.Hour), ""); err == nil {
		t.Error("a pause of a provider the engine does not manage was taken")
	}
}

// A taker that reads the shared record keeps the pause: the paused
// provider is not written, not even to flip its owner marker.
func TestPauseSurvivesATakeOver(t *testing.T) {
	a := newRig(t, 3)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	u := nodeUUID(2)
	if err := a.eng.Pause(context.Background(), u, time.Now().Add(time.Hour), "hold it"); err != nil {
		t.Fatal(err)
	}
	if err := a.fake.SetReserved(u, "CUSTOM_BAREMETAL_GOLD", 1); err != nil {
		t.Fatal(err)
	}
	b := taker(a, store)
	rep := b.cleanCycle()
	if b.reserved(u) != 1 || rep.Paused != 1 {
		t.Fatalf("after the take-over: reserved %d, paused %d; the pause was to hold", b.reserved(u), rep.Paused)
	}
	if p := b.provider(nodeUUID(0)); !slices.Contains(p.Traits, b.ownerT) {
		t.Fatalf("the others were to be taken over: %v", p.Traits)
	}
}
