package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

// TestEntriesAgreeWithAMap holds the state's entries, and intend's slots
// kept from the last whole cycle (hints), to a plain map through random
// cycles: desired lists that shift, grow and shrink, entries dropped and
// put between them (their slots reused), a clone, and a uuid "".
func TestEntriesAgreeWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &State{providers: newEntries()}
	want := map[string]known{}
	uuid := func() string {
		if rng.IntN(50) == 0 {
			return ""
		}
		return fmt.Sprintf("u%03d", rng.IntN(300))
	}
	for round := range 200 {
		for range rng.IntN(20) {
			switch u := uuid(); rng.IntN(3) {
			case 0:
				s.drop(u)
				delete(want, u)
			case 1:
				k := known{Observed: Observed{Exists: true, Generation: placement.Generation(fmt.Sprint(round))}}
				s.put(u, k)
				want[u] = k
			default:
				s.invalidate(u)
				if k, ok := want[u]; ok {
					want[u] = known{Record: k.Record}
				}
			}
		}
		desired := randomDesired(rng, s, round)
		listed := map[string]placement.Generation{}
		for _, d := range desired[:len(desired)/2] {
			listed[d.UUID] = "1"
		}
		gens := probeListed(desired, listed)
		s.intend(desired, listed, gens, func(i int, k known) {
			if w, _ := intended(want, desired[i], listed); !reflect.DeepEqual(k, w) {
				t.Fatalf("round %d: %s seen as %+v, want %+v", round, desired[i].UUID, k, w)
			}
		})
		for _, d := range desired {
			if k, add := intended(want, d, listed); add {
				want[d.UUID] = k
			}
		}
		if round%50 == 49 {
			s = s.clone()
		}
		checkEntries(t, round, s, want)
	}
}

// randomDesired is mostly the last round's desired list (so the hints
// hit), sometimes shifted by an insertion or shrunk.
func randomDesired(rng *rand.Rand, s *State, round int) []Desired {
	var out []Desired
	for u := range 120 + rng.IntN(3)*(round%7) {
		out = append(out, Desired{UUID: fmt.Sprintf("u%03d", u*2+rng.IntN(2)*(round%3/2)), Traits: []string{fmt.Sprint("T", u%5)}})
	}
	if rng.IntN(4) == 0 {
		out = slices.Insert(out, rng.IntN(len(out)), Desired{UUID: ""})
	}
	if rng.IntN(4) == 0 {
		out = out[rng.IntN(10):]
	}
	return slices.CompactFunc(out, func(a, b Desired) bool { return a.UUID == b.UUID })
}

// intended is what intend leaves of d's entry in want, and whether it
// writes it.
func intended(want map[string]known, d Desired, listed map[string]placement.Generation) (known, bool) {
	k := want[d.UUID]
	_, isListed := listed[d.UUID]
	add := !isListed && !k.Pending
	if !containsAll(k.Managed.Traits, d.Traits) {
		k.Managed.Traits = sortedSet(slices.Concat(k.Managed.Traits, d.Traits))
		k.Managed.Aggregates = sortedSet(k.Managed.Aggregates)
		add = true
	}
	k.Pending = k.Pending || !isListed
	return k, add
}

func checkEntries(t *testing.T, round int, s *State, want map[string]known) {
	t.Helper()
	got := maps.Collect(s.providers.all())
	if len(got) != len(want) || s.size() != len(want) {
		t.Fatalf("round %d: %d entries (size %d), want %d", round, len(got), s.size(), len(want))
	}
	for u, w := range want {
		if k, ok := s.get(u); !ok || !reflect.DeepEqual(k, w) || !reflect.DeepEqual(got[u], w) {
			t.Fatalf("round %d: %q is %+v (%v), want %+v", round, u, k, ok, w)
		}
	}
	if !slices.Equal(s.KnownProviders(), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("round %d: KnownProviders differs", round)
	}
}

// TestStateFileKeepsItsBytesThroughEntries: a file as encoding/json (and
// the engine before entries) wrote it, unsorted in memory, loads and is
// saved again byte for byte, with a provider put and one dropped between.
func TestStateFileKeepsItsBytesThroughEntries(t *testing.T) {
	f := richState()
	f.Holds = map[string]string{"n": "CUSTOM_X"}
	written, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, written, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadState(path, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	s.put("0", known{Observed: Observed{Exists: true, Generation: "1"}})
	s.drop("0")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	// The same bytes but the new file's id (statejournal.go).
	got, _ := os.ReadFile(path)
	if got = regexp.MustCompile(`,"journal":-?[0-9]+}$`).ReplaceAll(got, []byte("}")); !bytes.Equal(got, written) {
		t.Fatalf("saved\n%s\nwant\n%s", got, written)
	}
	if p, _ := walkCounts(s); p != 1 || s.proofs != 1 || s.pending != 1 {
		t.Fatalf("counts: %d proofs (walk %d), %d pending", s.proofs, p, s.pending)
	}
}

// TestEntriesCompactWhenMostAreRemoved: a fleet cut to a tenth keeps a
// tenth of the slots, every entry still found, by index and by intend's
// hints to places that moved.
func TestEntriesCompactWhenMostAreRemoved(t *testing.T) {
	s := &State{providers: newEntries()}
	var desired []Desired
	for i := range 1000 {
		desired = append(desired, Desired{UUID: fmt.Sprintf("u%04d", i)})
	}
	s.intend(desired, nil, make([]placement.Generation, len(desired)), nil)
	var kept []Desired
	for i, d := range desired {
		if i%10 == 9 {
			kept = append(kept, d)
			s.update(d.UUID, func(k *known) { k.Plugin = d.UUID })
		} else {
			s.drop(d.UUID)
		}
	}
	if n := len(s.providers.slots); n > 2*len(kept) {
		t.Fatalf("%d slots for %d entries", n, len(kept))
	}
	s.intend(kept, nil, make([]placement.Generation, len(kept)), func(i int, k known) {
		if k.Plugin != kept[i].UUID || !k.Pending {
			t.Fatalf("%s seen as %+v", kept[i].UUID, k)
		}
	})
	for _, d := range kept {
		if k, ok := s.get(d.UUID); !ok || k.Plugin != d.UUID {
			t.Fatalf("%s: %+v %v", d.UUID, k, ok)
		}
	}
	if s.size() != len(kept) {
		t.Fatalf("size %d, want %d", s.size(), len(kept))
	}
}
