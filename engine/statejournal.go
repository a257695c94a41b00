package engine

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// The state file's journal. A node sync changes one provider of 100,000,
// but rewriting the whole file (36 MB, temp file, fsync, rename) cost it
// ~350 ms of CPU (BenchmarkNodeSync100k). A save that changed few
// providers appends their entries to <state file>.journal as one line,
// fsynced, instead: the same durability before the writes that depend on
// it, at the cost of the change. The line is a state file of its own (the
// same encoder and reader): the changed providers, the ones forgotten
// (gone), the round and microversion, and the id of the whole file it
// applies on top of (journal). A whole save, when the journal has grown
// past a quarter of the file, when many providers changed or the holds
// did, writes a new file with a new id, which voids every line before it;
// the journal is then removed.
//
// A line is written whole in one write and fsynced before Save returns:
// a crash leaves at most a last line without its newline, whose save
// never returned (nothing was written on it): it is left out. After one,
// the next save is whole, so nothing is appended after a torn line.

// journalPath is the journal of the state file at path.
func journalPath(path string) string { return path + ".journal" }

// maxJournalEntries bounds a journal line: more changed providers than
// this (a cold cycle) and the save rewrites the whole file.
const maxJournalEntries = 4096

// changes is the set of providers changed since the last save, while
// tracked (a state with a file): what a journal line must carry.
type changes struct {
	on   bool
	over bool // more than maxJournalEntries: the next save is whole
	set  map[string]struct{}
}

// note records that uuid's entry changed.
func (c *changes) note(uuid string) {
	if !c.on || c.over {
		return
	}
	if len(c.set) >= maxJournalEntries {
		c.over, c.set = true, nil
		return
	}
	if c.set == nil {
		c.set = map[string]struct{}{}
	}
	c.set[uuid] = struct{}{}
}

// reset forgets the changes: they are saved.
func (c *changes) reset() { c.over, c.set = false, nil }

// journal is what the state knows of its file and journal; Save alone
// uses it (under State.saving), and the load.
type journal struct {
	epoch int64             // the whole file's id; 0 before one is written or read
	size  int64             // the journal's bytes
	base  int64             // the whole file's bytes
	whole bool              // the next save rewrites the whole file
	holds map[string]string // the holds as last saved
}

// appendable says, under the lock, whether this save may be a journal
// line.
func (s *State) appendable() bool {
	j, c := &s.jr, &s.providers.changed
	return j.epoch != 0 && !j.whole && !c.over && len(c.set) <= max(64, s.providers.len()/16) &&
		j.size <= j.base/4 && maps.Equal(j.holds, s.holds)
}

// journalLine encodes, under the lock, the providers changed since the
// last save as one journal line, and forgets them.
func (s *State) journalLine() ([]byte, error) {
	var present []string
	f := stateFile{Version: stateVersion, Key: s.key, Round: s.round, Microversion: s.version, Journal: s.jr.epoch}
	for _, u := range slices.Sorted(maps.Keys(s.providers.changed.set)) {
		if s.providers.find(u) {
			present = append(present, u)
		} else {
			f.Gone = append(f.Gone, u)
		}
	}
	s.providers.changed.reset()
	var b bytes.Buffer
	err := encodeWith(&b, f, func(e *stateEncoder) {
		e.raw("{")
		for i, u := range present {
			if i > 0 {
				e.raw(",")
			}
			k, _ := s.providers.get(u)
			e.value(u)
			e.raw(":")
			e.value(k)
		}
		e.raw("}")
	})
	b.WriteByte('\n')
	return b.Bytes(), err
}

// appendJournal appends line to the journal and fsyncs it (and, for a
// new journal, its directory).
func (s *State) appendJournal(line []byte) error {
	f, err := os.OpenFile(journalPath(s.path), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append to the state journal: %w", err)
	}
	_, err = f.Write(line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && s.jr.size == 0 {
		err = syncDir(filepath.Dir(s.path)) // the new file's name must last too
	}
	if err != nil {
		return fmt.Errorf("append to the state journal: %w", err)
	}
	s.jr.size += int64(len(line))
	return nil
}

// newEpoch is a whole file's id, other than old.
func newEpoch(old int64) int64 {
	for {
		if e := rand.Int64(); e != 0 && e != old {
			return e
		}
	}
}

// readJournal applies to es and f the lines of the journal of the file
// just read (f, base bytes long), in order. Lines for another file are
// skipped; a torn last line is left out. A line that cannot be read ends
// the replay with an error: the lines before it stand. Either way the
// next save rewrites the whole file.
func (s *State) readJournal(path string, es *entries, f *stateFile, base int64) error {
	s.jr = journal{epoch: f.Journal, base: base, holds: maps.Clone(f.Holds)}
	b, err := os.ReadFile(journalPath(path))
	if os.IsNotExist(err) {
		return nil
	}
	s.jr.size, s.jr.whole = int64(len(b)), true
	if err != nil {
		return fmt.Errorf("state journal %s unreadable, its changes lost: %w", journalPath(path), err)
	}
	s.jr.whole = false
	for n := 1; len(b) > 0; n++ {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		if !complete {
			s.jr.whole = true // a save cut short: nothing was written on it
			return nil
		}
		b = rest
		one := newEntries()
		lf, err := readStateInto(bytes.NewReader(line), &one)
		if err != nil {
			s.jr.whole = true
			return fmt.Errorf("state journal %s line %d unreadable, the changes from it on lost: %w", journalPath(path), n, err)
		}
		if f.Journal == 0 || lf.Journal != f.Journal || lf.Version != stateVersion || lf.Key != f.Key {
			s.jr.whole = true // written on top of another file
			continue
		}
		for u, k := range one.all() {
			es.put(u, k)
		}
		for _, u := range lf.Gone {
			es.remove(u)
		}
		f.Round, f.Microversion = lf.Round, lf.Microversion
	}
	return nil
}

// snapshot reads the file at path and its journal without the lock. The
// holder may replace the file between the two reads, and remove the
// journal the old file needed: then the new file is read again.
func snapshot(path, key string, also []string) (*State, error) {
	for try := 0; ; try++ {
		s := &State{providers: newEntries(), key: key}
		before, _ := os.Stat(path)
		err := s.read(path, also)
		after, _ := os.Stat(path)
		if try == 2 || before == nil || after == nil || os.SameFile(before, after) {
			return s, err
		}
	}
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
