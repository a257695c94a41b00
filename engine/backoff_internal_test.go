package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// Backoff after the n-th conflict is in (0, min(20ms·2ⁿ, 2s)]: never zero
// (writers that collided would collide again), never above the cap, and
// jittered over the whole range.
func TestBackoffBounds(t *testing.T) {
	for attempt := 1; attempt <= 12; attempt++ {
		ceiling := min(20*time.Millisecond<<attempt, 2*time.Second)
		lo, hi := ceiling, time.Duration(0)
		for range 2000 {
			d := backoff(attempt)
			if d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: backoff %s outside (0, %s]", attempt, d, ceiling)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo > ceiling/4 || hi < ceiling*3/4 {
			t.Errorf("attempt %d: 2000 backoffs spread over [%s, %s] only, of (0, %s]", attempt, lo, hi, ceiling)
		}
	}
}

// The wait between tries lasts exactly the backoff, and a cycle that is
// cut (stop timeout) ends it at once.
func TestBackoffWaitIsExactAndCancellable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := placement.Sleep(t.Context(), 1500*time.Millisecond); err != nil || time.Since(start) != 1500*time.Millisecond {
			t.Fatalf("sleep 1.5s: took %s, err %v", time.Since(start), err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		start = time.Now()
		if err := placement.Sleep(ctx, 2*time.Second); err == nil || time.Since(start) != 300*time.Millisecond {
			t.Fatalf("cancelled sleep: took %s, err %v; want the cancel at 300ms", time.Since(start), err)
		}
	})
}
