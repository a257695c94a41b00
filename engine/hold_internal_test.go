package engine

import (
	"maps"
	"path/filepath"
	"testing"
)

// The book of holds is part of the record: it survives a save and a load
// (the streaming reader included), so a new process checks it with one
// usage sum instead of reading every hold back.
func TestHoldBookInTheRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	s.setHeld("00000000-0000-4000-8000-000000000001", "CUSTOM_GOLD")
	s.setHeld("00000000-0000-4000-8000-000000000002", "CUSTOM_SILVER")
	s.dropHeld("00000000-0000-4000-8000-000000000002")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s2, err := LoadState(path, "k")
	want := map[string]string{"00000000-0000-4000-8000-000000000001": "CUSTOM_GOLD"}
	if err != nil || !maps.Equal(s2.heldBook(), want) {
		t.Fatalf("book after a load: %v %v", s2.heldBook(), err)
	}
	s2.setHolds(map[string]string{})
	if err := s2.Save(); err != nil {
		t.Fatal(err)
	}
	if s3, _ := LoadState(path, "k"); len(s3.heldBook()) != 0 {
		t.Fatalf("emptied book came back: %v", s3.heldBook())
	}
}
