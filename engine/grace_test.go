package engine_test

import (
	"sync"
	"testing"
	"time"
)

// stepClock is a clock the test moves by hand.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *stepClock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// A non-zero delete_grace: consecutive proofs closer than the grace to
// the first one delete nothing, however many there are; the first cycle
// at least the grace after the first proof deletes. The count survives a
// new engine on the same state, as after a restart.
func TestDeleteGraceIsHonouredAcrossCycles(t *testing.T) {
	const grace = 5 * time.Minute
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRig(t, 3)
	r.opts.DeleteGrace, r.opts.Clock = grace, clock
	r.restart()
	r.cleanCycle()
	gone := nodeUUID(2)
	r.src.set(func(s *source) { s.nodes = s.nodes[:2]; s.gone[gone] = true })
	r.cleanCycle() // first proof, at t0
	for i, step := range []time.Duration{time.Minute, 2 * time.Minute, time.Minute, grace - 4*time.Minute - time.Second} {
		clock.add(step)
		if i == 2 {
			r.restart()
		}
		if rep := r.cleanCycle(); rep.Deleted != 0 {
			t.Fatalf("deleted %s after the first proof, before the grace of %s", clock.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), grace)
		}
		r.provider(gone)
	}
	clock.add(time.Second) // exactly the grace since the first proof
	if rep := r.cleanCycle(); rep.Deleted != 1 {
		t.Fatalf("grace elapsed over consecutive proofs: want 1 deletion, report %+v", rep)
	}
	if _, ok := r.fake.Provider(gone); ok {
		t.Fatal("provider still there")
	}
}

// A cycle without a proof inside the grace restarts it: the grace counts
// from the first of an unbroken run of proofs.
func TestDeleteGraceRestartsAfterABrokenRun(t *testing.T) {
	const grace = 5 * time.Minute
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRig(t, 3)
	r.opts.DeleteGrace, r.opts.Clock = grace, clock
	r.restart()
	r.cleanCycle()
	gone := nodeUUID(2)
	r.src.set(func(s *source) { s.nodes = s.nodes[:2]; s.gone[gone] = true })
	r.cleanCycle() // first proof, at t0
	clock.add(3 * time.Minute)
	r.src.set(func(s *source) { s.failNodes = errBoom })
	r.cycle() // no proof at t0+3m
	r.src.set(func(s *source) { s.failNodes = nil })
	clock.add(time.Minute)
	r.cleanCycle() // a new first proof, at t0+4m
	clock.add(grace - time.Second)
	if rep := r.cleanCycle(); rep.Deleted != 0 {
		t.Fatal("the grace counted from a proof before the broken run")
	}
	clock.add(time.Second)
	if rep := r.cleanCycle(); rep.Deleted != 1 {
		t.Fatalf("grace since the new first proof: want 1 deletion, report %+v", rep)
	}
}
