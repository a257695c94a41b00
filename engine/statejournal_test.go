package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// journalRig is a state file of n providers, saved whole.
func journalRig(t *testing.T, n int) (*State, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := LoadState(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		s.put(fmt.Sprintf("p%04d", i), known{Observed: Observed{Exists: true, Generation: "1", Traits: []string{"A"}},
			Record: Record{Managed: Managed{Traits: []string{"A"}}, Plugin: "fake"}})
	}
	s.setMicroversion("1.39")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// reload reads the state at path as a new process would.
func reload(t *testing.T, path string) (*State, error) {
	t.Helper()
	return LoadState(path, "k")
}

// sameState fails unless a and b hold the same providers, round and
// microversion.
func sameState(t *testing.T, a, b *State) {
	t.Helper()
	ma, mb := map[string]known{}, map[string]known{}
	for u, k := range a.providers.all() {
		ma[u] = k
	}
	for u, k := range b.providers.all() {
		mb[u] = k
	}
	if !reflect.DeepEqual(ma, mb) || a.round != b.round || a.version != b.version {
		t.Fatalf("reloaded state differs: %d vs %d providers, round %d vs %d, microversion %q vs %q",
			len(ma), len(mb), a.round, b.round, a.version, b.version)
	}
}

// A save of a few changed providers appends them to the journal and
// leaves the whole file as it was; a new process reads both and has
// every change: an update, a record grown by intend, a new provider, a
// forgotten one, the round.
func TestJournalKeepsAFewChangesWithoutRewritingTheFile(t *testing.T) {
	s, path := journalRig(t, 200)
	whole, _ := os.ReadFile(path)
	s.update("p0003", func(k *known) { k.Generation = "2"; k.GoneSince = time.Unix(100, 0).UTC() })
	s.intend([]Desired{{UUID: "p0005", Traits: []string{"A", "B"}}}, map[string]placement.Generation{"p0005": "1"}, nil, nil)
	s.put("new", known{Observed: Observed{Exists: true, Generation: "9"}})
	s.drop("p0007")
	s.nextRound()
	s.dirty = true
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, whole) {
		t.Fatal("a save of four changes rewrote the whole file")
	}
	if j, err := os.ReadFile(journalPath(path)); err != nil || bytes.Count(j, []byte("\n")) != 1 {
		t.Fatalf("journal: %v, %q; want one line", err, j)
	}
	got, err := reload(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, s, got)
	if k, _ := got.providers.get("p0005"); !reflect.DeepEqual(k.Managed.Traits, []string{"A", "B"}) || got.proofs != 1 {
		t.Fatalf("intend's record lost: %+v; proofs %d", k.Managed, got.proofs)
	}
}

// A torn last line (a save cut short, which never returned) is left out;
// the next save then rewrites the whole file and drops the journal, so
// nothing is appended after the torn line.
func TestJournalLeavesATornLineOut(t *testing.T) {
	s, path := journalRig(t, 100)
	s.update("p0001", func(k *known) { k.Generation = "2" })
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(journalPath(path), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"version":1,"key":"k","round":0,"providers":{"p0002":{"Exists":tr`)
	f.Close()
	got, err := reload(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, s, got)
	if !got.jr.whole {
		t.Fatal("after a torn line the next save must be whole")
	}
	got.update("p0002", func(k *known) { k.Generation = "3" })
	if err := got.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journalPath(path)); !os.IsNotExist(err) {
		t.Fatalf("journal after a whole save: %v", err)
	}
	again, _ := reload(t, path)
	sameState(t, got, again)
}

// Lines written on top of another whole file (a crash between the new
// file's rename and the journal's removal) are void: a new file has a new
// id.
func TestJournalLinesOfAnotherFileAreVoid(t *testing.T) {
	s, path := journalRig(t, 100)
	s.update("p0001", func(k *known) { k.Generation = "11" })
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	stale, _ := os.ReadFile(journalPath(path))
	s.jr.whole = true // as after a torn line
	s.update("p0001", func(k *known) { k.Generation = "12" })
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(journalPath(path), stale, 0o644) // the removal lost
	got, err := reload(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := got.providers.get("p0001"); k.Generation != "12" {
		t.Fatalf("generation %q: a void line was applied", k.Generation)
	}
}

// A line that cannot be read is an error; the lines before it stand.
func TestJournalUnreadableLineIsAnError(t *testing.T) {
	s, path := journalRig(t, 100)
	s.update("p0001", func(k *known) { k.Generation = "2" })
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(journalPath(path), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json}\n")
	f.Close()
	got, err := reload(t, path)
	if err == nil {
		t.Fatal("an unreadable journal line: no error")
	}
	if k, _ := got.providers.get("p0001"); k.Generation != "2" || got.providers.len() != 100 {
		t.Fatalf("the lines before it lost: %q, %d providers", k.Generation, got.providers.len())
	}
}

// The journal is folded into a new whole file once it outgrows a quarter
// of the file, and a save of many changes is whole at once.
func TestJournalIsFoldedIntoTheFile(t *testing.T) {
	s, path := journalRig(t, 100)
	whole, _ := os.ReadFile(path)
	saves := 0
	for i := 0; ; i++ {
		s.update(fmt.Sprintf("p%04d", i%100), func(k *known) { k.Generation = placement.Generation(fmt.Sprint(i)) })
		if err := s.Save(); err != nil {
			t.Fatal(err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, whole) {
			break
		}
		if saves++; saves > 100 {
			t.Fatal("the journal was never folded")
		}
	}
	if _, err := os.Stat(journalPath(path)); !os.IsNotExist(err) || saves < 5 {
		t.Fatalf("after %d appended saves the file was rewritten; journal: %v", saves, err)
	}
	for i := range 80 {
		s.update(fmt.Sprintf("p%04d", i), func(k *known) { k.Generation = "777" })
	}
	before, _ := os.ReadFile(path)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); bytes.Equal(now, before) {
		t.Fatal("80 changes of 100 providers were appended, not written whole")
	}
	got, _ := reload(t, path)
	sameState(t, s, got)
}
