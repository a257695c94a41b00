package engine

import (
	"maps"
	"slices"
)

// foreignRewrite tells whether another writer changed a provider's values
// that the engine had set, so that the engine must write them back: a
// fight (nova-compute rewriting inventory or stripping the owner marker is
// the common one). seen is the cache entry from before this cycle, o the
// fresh read, ws the writes planned from it. A change the engine agrees
// with (no writes) is not a rewrite; neither is a provider it never saw.
func foreignRewrite(seen known, o Observed, ws []Write) bool {
	if len(ws) == 0 || !seen.Exists || seen.Generation == "" || seen.Generation == o.Generation {
		return false
	}
	if !maps.Equal(seen.Inventory, o.Inventory) {
		return true
	}
	return lost(seen.Traits, seen.Managed.Traits, o.Traits) || lost(seen.Aggregates, seen.Managed.Aggregates, o.Aggregates)
}

// lost reports whether an item the engine manages, present before, is gone.
func lost(before, managed, now []string) bool {
	for _, x := range managed {
		if slices.Contains(before, x) && !slices.Contains(now, x) {
			return true
		}
	}
	return false
}

// KnownProviders lists the providers the cache knows, sorted: for `engine
// validate`, to tell a marker that disappeared from one the engine never
// put there.
func (s *State) KnownProviders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.providers.sorted()
}
