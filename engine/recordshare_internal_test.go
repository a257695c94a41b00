package engine

import (
	"slices"
	"testing"
)

// What the store is told: a changed record is put, a provider gone from
// Placement deleted, one another manager took forgotten without touching
// its entry (the new owner's), and nothing when nothing changed.
func TestTakeSharedPutsDropsAndForgets(t *testing.T) {
	s, _ := LoadState("", "")
	s.share(true)
	s.put("a", known{Record: Record{Managed: Managed{Traits: []string{"CUSTOM_GPU"}}}})
	s.put("b", known{Record: Record{Pending: true}})
	put, del, _ := s.takeShared("me")
	if len(put) != 2 || len(del) != 0 {
		t.Fatalf("put %v del %v", put, del)
	}
	s.put("a", known{Observed: Observed{Generation: "7"}, Record: Record{Managed: Managed{Traits: []string{"CUSTOM_GPU"}}}})
	if put, del, _ := s.takeShared("me"); len(put)+len(del) != 0 {
		t.Fatalf("a cache-only change was stored: put %v del %v", put, del)
	}
	s.update("b", func(k *known) { k.Pending = false })
	s.forget("b")
	s.drop("a")
	put, del, _ = s.takeShared("me")
	if len(put) != 0 || !slices.Equal(del, []string{"a"}) {
		t.Fatalf("after drop a, forget b: put %v del %v", put, del)
	}
}
