package engine

import (
	"fmt"
	"maps"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

// What an idle cycle beside nova pays for the swap check, without a
// request, at 100,000 providers: the desired order against the last
// check's (memory), the whole listing against the last one (while it
// lists providers of no desired node), or against the record's
// generations (a new process's first cycle).
func BenchmarkHoldMovedSince100k(b *testing.B) {
	const n = 100_000
	listed := make(map[string]placement.Generation, n)
	s := &State{providers: newEntries()}
	desired := make([]Desired, n)
	gens := make([]placement.Generation, n)
	for i := range n {
		u := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		g := placement.Generation(fmt.Sprint(i % 97))
		listed[u], desired[i], gens[i] = g, Desired{UUID: u}, g
		s.providers.put(u, known{Observed: Observed{Generation: g}})
	}
	c := &cycle{gens: gens}
	for _, tc := range []struct {
		name string
		seen *listingSeen
	}{
		{"memory", c.keepSeen(desired, listed, map[string]string{"x": "y"})},
		{"listing", &listingSeen{all: maps.Clone(listed)}},
		{"record", nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := &holdBook{seen: tc.seen}
			for b.Loop() {
				if h.movedSince(gens, desired, listed, s) {
					b.Fatal("moved")
				}
			}
		})
	}
}
