package engine

import (
	"errors"
	"reflect"
	"syscall"

	"github.com/rpengine/rpengine/engine/placement"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStateRoundTripAndCorruption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	s.put("u", known{Observed: Observed{Exists: true, Generation: "12345678901234567890"}, Record: Record{Managed: Managed{Traits: []string{"A"}}}})
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s2, err := LoadState(path, "k")
	if k, ok := s2.get("u"); err != nil || !ok || k.Generation != "12345678901234567890" || k.Managed.Traits[0] != "A" {
		t.Fatalf("round trip: %v %+v", err, k)
	}
	os.WriteFile(path, []byte(`{"version":1,"key":"k","providers":{"u":`), 0o644)
	s3, err := LoadState(path, "k")
	if err == nil || s3.providers.len() != 0 {
		t.Fatalf("a torn file must be refused and start cold: %v", err)
	}
}

func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":1,"key":"k","providers":{"u":{"Exists":true,"Generation":"5"}}}`))
	f.Add([]byte(`{"version":1,"key":"k","providers":{"u":{"Generation":null}}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "s.json")
		os.WriteFile(path, b, 0o644)
		s, err := LoadState(path, "k")
		if s == nil {
			t.Fatal("LoadState must always return a usable cache")
		}
		if err != nil && s.providers.len() != 0 {
			t.Fatal("a refused file must leave the cache empty")
		}
	})
}

func TestSaveWritesOnlyWhenSomethingChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := LoadState(path, "k")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("an unchanged cache was written")
	}
	s.put("u", known{Observed: Observed{Exists: true, Generation: "1"}})
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	s.Save()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a saved cache was written again with no change")
	}
	if _, pending := s.nextRound(); pending {
		t.Fatal("no proof is pending")
	}
	s.Save()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a new round with no pending proof dirtied the cache")
	}
	s.update("u", func(k *known) { k.GoneSince = time.Now() })
	s.Save()
	os.Remove(path)
	if _, pending := s.nextRound(); !pending {
		t.Fatal("a proof is pending")
	}
	if s.Save(); !exists(path) {
		t.Fatal("a round with a pending proof must be saved")
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// The file is written with encoding/json and read with json v2: the two
// must agree on every field.
func TestStateFileReadsBackExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := LoadState(path, "k")
	want := known{Observed: Observed{Exists: true, Generation: "99",
		Inventory: map[string]placement.Inventory{"CUSTOM_X": {Total: 1, Reserved: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1.5}},
		Traits:    []string{"A"}, Aggregates: []string{"g"}},
		Record: Record{Managed: Managed{Traits: []string{"A"}}, Retained: []string{"CUSTOM_OLD"}, GoneSince: time.Unix(100, 5).UTC(), ProofRound: 7}}
	s.put("u", want)
	s.nextRound()
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s2, err := LoadState(path, "k")
	got, _ := s2.get("u")
	if err != nil || !reflect.DeepEqual(got, want) || s2.round != 1 {
		t.Fatalf("%v\n got %+v\nwant %+v", err, got, want)
	}
}

func TestStateFileThatCannotHoldTheRecordIsFatal(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadState(dir, "k"); !errors.Is(err, ErrStateUnusable) {
		t.Fatalf("a directory as state file: %v", err)
	}
	path := filepath.Join(dir, "state.json")
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(path, "k"); !errors.Is(err, ErrStateInUse) {
		t.Fatalf("a state file locked by another engine: %v", err)
	}
}

// A snapshot reads the file an engine holds locked (here this process;
// the e2e test has `engine run` hold it), whole, and never writes it.
func TestSnapshotReadsTheHeldFileAndNeverWritesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	s.put("u1", known{Record: Record{Managed: Managed{Traits: []string{"CUSTOM_X"}}, ProofRound: 3}})
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	snap, err := SnapshotState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := snap.Record("u1"); !ok || !reflect.DeepEqual(r.Managed.Traits, []string{"CUSTOM_X"}) || r.ProofRound != 3 {
		t.Fatalf("snapshot record %+v %v", r, ok)
	}
	snap.put("u2", known{})
	if err := snap.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a snapshot's save wrote the file")
	}
	if _, err := SnapshotState(path, "other"); err == nil {
		t.Error("a snapshot of another engine's file was taken")
	}
}
