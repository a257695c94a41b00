package engine

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// walkCounts counts, by walking every entry, what State.proofs and
// State.pending keep as they change.
func walkCounts(s *State) (proofs, pending int) {
	for _, k := range s.providers.all() {
		if !k.GoneSince.IsZero() {
			proofs++
		}
		if k.Pending {
			pending++
		}
	}
	return proofs, pending
}

// TestStateCountsFollowEveryWrite holds the counts that spare an idle
// cycle its walks of the state to a walk, after random writes through
// every path that changes an entry, a load from the file and a clone.
func TestStateCountsFollowEveryWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	uuids := []string{"a", "b", "c", "d", "e", "f"}
	check := func(s *State, step int, op string) {
		t.Helper()
		if p, q := walkCounts(s); p != s.proofs || q != s.pending {
			t.Fatalf("step %d (%s): counts %d proofs, %d pending; the entries hold %d, %d", step, op, s.proofs, s.pending, p, q)
		}
	}
	var sawProofs, sawPending int
	for step := range 2000 {
		op := []string{"put", "update", "invalidate", "drop", "forget", "forgetProof", "intend", "merge", "pendingOrphans"}[rng.IntN(9)]
		writeOnce(t, s, rng, op, uuids[rng.IntN(len(uuids))])
		check(s, step, op)
		sawProofs, sawPending = max(sawProofs, s.proofs), max(sawPending, s.pending)
		if step%500 == 499 {
			check(s.clone(), step, "clone")
			s.dirty = true
			if err := s.Save(); err != nil {
				t.Fatal(err)
			}
			if s, err = LoadState(path, "k"); err != nil {
				t.Fatal(err)
			}
			check(s, step, "load")
		}
	}
	if sawProofs < 2 || sawPending < 2 {
		t.Fatalf("at most %d proofs and %d pending creations at once: weak test", sawProofs, sawPending)
	}
}

// writeOnce changes s through op, on uuid u.
func writeOnce(t *testing.T, s *State, rng *rand.Rand, op, u string) {
	gone := time.Unix(1e9, 0)
	switch op {
	case "put":
		s.put(u, known{Record: Record{Pending: rng.IntN(2) == 0}})
	case "update":
		s.update(u, func(k *known) {
			if rng.IntN(2) == 0 {
				k.GoneSince, k.ProofRound = gone, 3
			} else {
				k.Pending = !k.Pending
			}
		})
	case "invalidate":
		s.invalidate(u)
	case "drop":
		s.drop(u)
	case "forget":
		s.forget(u)
	case "forgetProof":
		s.forgetProof(u)
	case "intend":
		listed := map[string]placement.Generation{}
		if rng.IntN(2) == 0 {
			listed[u] = "1"
		}
		s.intend([]Desired{{UUID: u, Traits: []string{"T" + u}}}, listed, nil, nil)
	case "merge":
		s.mergeShared(map[string]stored{u: {By: "other", Record: Record{GoneSince: gone, ProofRound: 1, Pending: true}}},
			"me", evidence{ours: func(string) bool { return rng.IntN(2) == 0 }, desired: func(string) bool { return true }})
	case "pendingOrphans":
		if len(s.pendingOrphans(nil, nil)) != s.pending {
			t.Fatalf("pendingOrphans disagrees with %d pending", s.pending)
		}
	}
}
