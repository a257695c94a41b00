package record

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

// fakeLedger counts saves and hands out the entries marked changed.
type fakeLedger struct {
	saves   int
	saveErr error
	changed map[string][]byte
}

func (l *fakeLedger) Save() error { l.saves++; return l.saveErr }

func (l *fakeLedger) Paused(string) bool { return false }

func (l *fakeLedger) TakeShared() (map[string][]byte, []string, []string) {
	put := l.changed
	l.changed = nil
	return put, nil, slices.Sorted(maps.Keys(put))
}

func (l *fakeLedger) Reshare(uuids []string) {
	l.changed = map[string][]byte{}
	for _, u := range uuids {
		l.changed[u] = []byte("again")
	}
}

// fakeStore keeps entries in memory and can fail its stores.
type fakeStore struct {
	entries  map[string][]byte
	loads    int
	storeErr error
}

func (s *fakeStore) Load(context.Context) (map[string][]byte, error) {
	s.loads++
	return maps.Clone(s.entries), nil
}

func (s *fakeStore) Store(_ context.Context, put map[string][]byte, _ []string) error {
	if s.storeErr != nil {
		return s.storeErr
	}
	maps.Copy(s.entries, put)
	return nil
}

func TestIntendIsDurableBeforeTheWriter(t *testing.T) {
	l, st := &fakeLedger{}, &fakeStore{entries: map[string][]byte{"a": []byte("old")}}
	k := New(nil, l)
	k.Share(st, false) // the first store is always read
	var got map[string][]byte
	w, err := k.Intend(context.Background(), func(shared map[string][]byte) bool {
		got = shared
		l.changed = map[string][]byte{"b": []byte("new")}
		return true
	})
	if err != nil || w == nil {
		t.Fatalf("Intend = %v, %v", w, err)
	}
	if string(got["a"]) != "old" || st.loads != 1 {
		t.Errorf("the intent saw %q after %d loads, want the store's entry after 1", got, st.loads)
	}
	if l.saves != 1 || string(st.entries["b"]) != "new" {
		t.Errorf("saves %d, store %q: the intent is not durable in both", l.saves, st.entries)
	}
	if g, ok := w.(guarded); !ok || w.All() != nil {
		t.Errorf("writer %T, want the sender behind the pause guard", w)
	} else if _, ok := g.Writer.(sender); !ok {
		t.Errorf("guarded writer %T, want the sender", g.Writer)
	}
	if _, err := k.Intend(context.Background(), func(shared map[string][]byte) bool {
		if shared != nil {
			t.Error("the store read again though no reload is due")
		}
		return false
	}); err != nil || l.saves != 1 {
		t.Errorf("an unchanged intent: err %v, saves %d, want no save", err, l.saves)
	}
	if err := k.Save(); err != nil || l.saves != 2 {
		t.Errorf("Save: %v, saves %d; want the file written again", err, l.saves)
	}
}

func TestIntendRefusesTheWriterWhenNotDurable(t *testing.T) {
	l := &fakeLedger{saveErr: errors.New("disk full")}
	if w, err := New(nil, l).Intend(context.Background(), func(map[string][]byte) bool { return true }); err == nil || w != nil {
		t.Fatalf("a failed save: Intend = %v, %v; want no writer and the error", w, err)
	}
	l = &fakeLedger{}
	st := &fakeStore{entries: map[string][]byte{}, storeErr: errors.New("lease lost")}
	k := New(nil, l)
	k.Share(st, false)
	w, err := k.Intend(context.Background(), func(map[string][]byte) bool {
		l.changed = map[string][]byte{"b": []byte("new")}
		return true
	})
	if err == nil || w != nil {
		t.Fatalf("a failed store: Intend = %v, %v; want no writer and the error", w, err)
	}
	if _, ok := l.changed["b"]; !ok {
		t.Error("the entry the store refused is not kept for the next store")
	}
}

func TestPlanRecordsAndPersistsNothing(t *testing.T) {
	l, pl := &fakeLedger{}, &fakeLedger{}
	st := &fakeStore{entries: map[string][]byte{"a": []byte("old")}}
	k := New(nil, l)
	k.Share(st, true)
	p := k.ForPlan(pl)
	w, err := p.Intend(context.Background(), func(shared map[string][]byte) bool {
		if shared == nil {
			t.Error("the plan did not read the store the cycle would read")
		}
		pl.changed = map[string][]byte{"b": []byte("new")}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.SetTraits(context.Background(), "n1", "7", []string{"CUSTOM_A"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	if pl.saves != 0 || l.saves != 0 || st.entries["b"] != nil {
		t.Errorf("a plan persisted: saves %d/%d, store %q", pl.saves, l.saves, st.entries)
	}
	if ws := w.Recorded("n1"); len(ws) != 1 || ws[0].Op != OpTraits {
		t.Errorf("recorded %v, want the one trait write", ws)
	}
	if !k.reload {
		t.Error("the plan's read left the engine's read done")
	}
}

// A Keeper with no ledger (nova-standdown's) hands out a writer that
// knows of no pause, instead of failing.
func TestKeeperWithoutLedgerWrites(t *testing.T) {
	k := New(nil, nil)
	w, err := k.Intend(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := w.(guarded); !ok || g.paused("00000000-0000-4000-8000-000000000001") {
		t.Fatalf("writer %T: want the guarded sender, with nothing paused", w)
	}
}

// A part's intent reads the store when due and leaves the read due for
// the next whole one; once that has read, nothing is due.
func TestIntendPartLeavesTheReadDue(t *testing.T) {
	l, st := &fakeLedger{}, &fakeStore{entries: map[string][]byte{"a": []byte("old")}}
	k := New(nil, l)
	k.Share(st, true)
	read := func(part bool) bool {
		var got map[string][]byte
		intend := k.Intend
		if part {
			intend = k.IntendPart
		}
		if _, err := intend(context.Background(), func(shared map[string][]byte) bool { got = shared; return false }); err != nil {
			t.Fatal(err)
		}
		return got != nil
	}
	var got []bool
	for _, part := range []bool{true, true, false, false, true} {
		got = append(got, read(part))
	}
	if !slices.Equal(got, []bool{true, true, true, false, false}) {
		t.Errorf("store read by part, part, whole, whole, part: %v; want parts to read while a whole read is due, then nothing", got)
	}
}
