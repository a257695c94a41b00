package engine

import (
	"testing"
	"time"
)

// A take-over that yielded in a row flips twice as long before the next
// yield, up to a minute: a stream of notifications slows it, never
// stretches it without bound.
func TestFlipsBeforeAYieldDoubleUpToAMinute(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, 64 * time.Second}
	for yields, w := range want {
		if got := flipsFor(int32(yields)); got != w {
			t.Errorf("after %d yields: %s, want %s", yields, got, w)
		}
	}
}
