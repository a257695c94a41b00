package engine

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// known is what the engine last saw of one provider, valid while the
// provider's generation is unchanged (any change bumps the generation),
// and the provider's ownership record.
type known struct {
	Observed
	Record
}

// Record is the ownership record of one provider: what the engine must
// still know after kill -9, and with [coord] etcd after the loss of its
// host (record.go). It is the part of known that invalidate keeps.
//
// A new field must also go into sameRecord and mergeRecord (record.go)
// and into knownFields and field (statefile.go), which read the file.
type Record struct {
	Managed Managed
	// Retained lists classes the source no longer reports but that still
	// have allocations: kept, fully reserved, until they are free.
	Retained []string `json:",omitempty"`
	// GoneSince is when the source first proved the node deleted, and
	// ProofRound the cycle of the latest proof: proofs count only in
	// consecutive cycles.
	GoneSince  time.Time `json:",omitzero"`
	ProofRound int64     `json:",omitempty"`
	// Pending marks a provider the engine may have created without yet
	// marking it as its own (record.go): a crash in between must not leave
	// an unmarked provider nobody manages.
	Pending bool `json:",omitempty"`
	// Plugin names the plugin whose node this provider was written for:
	// only that plugin may prove the node gone ("" before this was kept).
	Plugin string `json:",omitempty"`
	// Doubt is why the engine fully reserved this provider on its own,
	// without the source's data (doubt.go): quarantined, pending_deletion.
	// It is on disk before that write; a sync of the source's data clears
	// it. DoubtGeneration is the generation the reserve left, so a cycle
	// that lists it unchanged sends nothing.
	Doubt           string               `json:",omitempty"`
	DoubtGeneration placement.Generation `json:",omitempty"`
	// PausedUntil, while set, says an operator paused this provider
	// (engine pause, pause.go): no write reaches it, deletion never
	// proceeds, until engine resume. The time is when the operator meant
	// to resume; past it the pause holds, and is reported overdue.
	PausedUntil time.Time `json:",omitzero"`
	PauseReason string    `json:",omitempty"`
}

// State holds, between cycles and between processes (through an optional
// file), two things: a cache of what was seen of each provider, which a
// lost file only costs re-reads; and the ownership record — what the engine
// added, what it may have created, its deletion proofs — which is written
// and fsynced before the writes that depend on it (record.go).
type State struct {
	mu        sync.Mutex
	saving    sync.Mutex // one Save at a time: they share the temporary file
	providers entries    // entries.go
	jr        journal    // the file's journal (statejournal.go)
	// hints is, for each desired provider of the last whole cycle, by
	// index, the slot intend found it at (entries.at).
	hints []int32
	path  string
	key   string // endpoint and engine id the file belongs to
	round int64  // cycles started, for consecutive deletion proofs
	dirty bool   // changed since loaded or saved
	// version is the negotiated microversion: a new process then sends no
	// discovery request.
	version string
	// shared, while a RecordStore holds the record, collects the uuids
	// whose record changed since it was last stored (recordshare.go).
	shared map[string]struct{}
	// holds is the book of holds beside nova, node -> class (hold.go): a
	// cache checked against Placement each cycle, kept in this process's
	// file so a new process need not read every hold back. Placement is
	// its record; a RecordStore's entry carries each provider's hold only
	// as a hint for a peer taking the node over (fleet.go).
	holds map[string]string
	// peerHolds are holds a peer's record entries name on this engine's
	// providers and the book lacks: adopted or released (hold.go).
	peerHolds map[string]string
	// holdWanted are the holds this run may place: stored with the record
	// before the first write, so a peer taking over after a kill -9 knows
	// of a hold placed but not yet booked.
	holdWanted map[string]string
	// proofs and pending count the entries with a proof of deletion
	// (GoneSince) and with a pending creation: kept by every write of
	// providers (set, remove), so a cycle learns there are none without
	// walking 100,000 entries (nextRound, anyProof, pendingOrphans).
	proofs, pending int
	paused          int // entries an operator paused (pause.go)
	// writes counts the writes of providers: a cycle that judged every
	// entry at intend knows, from an unchanged count, that its judgements
	// still stand (settled, sync.go).
	writes int64
}

type stateFile struct {
	Version      int               `json:"version"`
	Key          string            `json:"key"`
	Round        int64             `json:"round"`
	Providers    map[string]known  `json:"providers"`
	Microversion string            `json:"microversion,omitempty"`
	Holds        map[string]string `json:"holds,omitempty"`
	// Journal names this whole file; the journal's lines that carry it
	// apply on top of it (statejournal.go). A journal line also lists the
	// providers it forgets (Gone).
	Journal int64    `json:"journal,omitempty"`
	Gone    []string `json:"gone,omitempty"`
}

// ErrStateUnusable means the state file cannot hold the ownership record
// (a directory, unwritable, or locked by another engine): the engine must
// not write without it.
var ErrStateUnusable = errors.New("state file unusable")

// ErrStateInUse means another engine process holds the state file.
var ErrStateInUse = fmt.Errorf("%w: locked", ErrStateUnusable)

const stateVersion = 1

// LoadState reads the state at path ("" = memory only). A missing,
// corrupt or foreign file yields an empty state and an error to log; a
// path that cannot hold the record (a directory, an unwritable place, a
// file another engine holds) yields an error wrapping ErrStateUnusable,
// which callers must treat as fatal.
//
// A file whose key is one of also (an older spelling of key) is read and
// saved under key from then on.
func LoadState(path, key string, also ...string) (*State, error) {
	s := &State{providers: newEntries(), path: path, key: key}
	if path == "" {
		return s, nil
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return s, fmt.Errorf("%w: %s is not a regular file", ErrStateUnusable, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return s, fmt.Errorf("%w: %v", ErrStateUnusable, err)
	}
	if err := lockState(path); err != nil {
		return s, err
	}
	err := s.read(path, also)
	s.providers.changed.on = true // what the next save's journal line carries
	return s, err
}

// SnapshotState reads the state at path without taking its lock, for a
// plan beside the engine that holds it: the holder replaces the file by
// rename, so this reads one whole version of it. The state returned is
// memory only: it is never saved, so the holder's file stays its own.
func SnapshotState(path, key string, also ...string) (*State, error) {
	s := &State{providers: newEntries(), key: key}
	if path == "" {
		return s, nil
	}
	return snapshot(path, key, also)
}

// read loads the file at path into s, which has only its key yet.
func (s *State) read(path string, also []string) error {
	key := s.key
	file, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state file %s unreadable, starting cold: %w", path, err)
	}
	defer file.Close()
	// Streamed with json v2's tokenizer, equal values shared (statefile.go):
	// it reads what encoding/json wrote (checked field by field in a test).
	es := newEntries()
	f, err := readStateInto(bufio.NewReaderSize(file, 64<<10), &es)
	if err != nil {
		return fmt.Errorf("state file %s corrupt, starting cold: %w", path, err)
	}
	if f.Version != stateVersion || f.Key != key && !slices.Contains(also, f.Key) {
		return fmt.Errorf("state file %s belongs to %q (version %d), not %q: starting cold", path, f.Key, f.Version, key)
	}
	base := int64(0)
	if fi, err := file.Stat(); err == nil {
		base = fi.Size()
	}
	jerr := s.readJournal(path, &es, &f, base)
	s.providers = es
	for _, k := range es.all() {
		s.recount(k, 1)
	}
	s.round, s.version, s.holds = f.Round, f.Microversion, f.Holds
	return jerr
}

// Save writes the state durably, and only if something changed: an idle
// cycle at 10,000 nodes would rewrite 3 MB. A few changed providers are
// appended to the journal (statejournal.go); else the whole file is
// written (temp file, fsync, rename, fsync of the directory).
func (s *State) Save() error {
	s.saving.Lock()
	defer s.saving.Unlock()
	s.mu.Lock()
	if s.path == "" || !s.dirty {
		s.mu.Unlock()
		return nil
	}
	s.dirty = false
	var err error
	if s.appendable() {
		var line []byte
		line, err = s.journalLine()
		s.mu.Unlock()
		if err == nil {
			err = s.appendJournal(line)
		}
	} else {
		err = s.saveWhole() // unlocks s.mu once the file is written
	}
	if err != nil {
		s.mu.Lock()
		s.dirty, s.jr.whole = true, true // try again next time, whole
		s.mu.Unlock()
	}
	return err
}

// saveWhole writes every provider to a new file, with a new id that voids
// the journal's lines; called under s.mu, which it releases.
func (s *State) saveWhole() error {
	epoch, holds := newEpoch(s.jr.epoch), maps.Clone(s.holds)
	s.providers.changed.reset()
	f, err := s.create()
	w := &countWriter{w: f}
	if err == nil {
		// Streamed under the lock (statesave.go): no copy of the whole file.
		f := stateFile{Version: stateVersion, Key: s.key, Round: s.round, Microversion: s.version, Holds: s.holds, Journal: epoch}
		if err = encodeEntries(w, f, &s.providers); err != nil {
			err = fmt.Errorf("write state: %w", err)
		}
	}
	s.mu.Unlock()
	if err == nil {
		err = s.commit(f)
	} else if f != nil {
		f.Close()
	}
	if err != nil {
		return err
	}
	s.jr = journal{epoch: epoch, base: w.n, holds: holds}
	// The journal's lines name the file before: void now, so removed (an
	// error leaves them void).
	os.Remove(journalPath(s.path))
	return nil
}

// create opens the temporary file a Save writes before its rename.
func (s *State) create() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	f, err := os.OpenFile(s.path+".tmp", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("write state: %w", err)
	}
	return f, nil
}

// commit makes the written temporary file the state file.
func (s *State) commit(f *os.File) error {
	err := f.Sync() // the rename must not land before the bytes
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(f.Name(), s.path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("write state: sync dir: %w", err)
	}
	return nil
}

// clone copies the state to memory only (no file), for a plan to work on:
// entries are values whose slices and maps are replaced, never modified.
func (s *State) clone() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &State{providers: s.providers.clone(), key: s.key, round: s.round, version: s.version, holds: maps.Clone(s.holds),
		peerHolds: maps.Clone(s.peerHolds), proofs: s.proofs, pending: s.pending, paused: s.paused}
}

func (s *State) get(uuid string) (known, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.providers.get(uuid)
}

// Record returns the ownership record of the provider uuid, if any.
func (s *State) Record(uuid string) (Record, bool) {
	k, ok := s.get(uuid)
	return k.Record, ok
}

// writeCount is the number of writes of providers so far.
func (s *State) writeCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// size is the number of providers known.
func (s *State) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.providers.len()
}

func (s *State) put(uuid string, k known) {
	s.mu.Lock()
	s.dirty = true
	s.changedRecord(uuid, k.Record)
	old, _ := s.providers.get(uuid)
	s.changedSeen(uuid, old, k)
	s.set(uuid, old, k)
	s.mu.Unlock()
}

// set replaces uuid's entry old (the zero known if none) with k, under
// the lock, keeping the counts.
func (s *State) set(uuid string, old, k known) {
	s.recount(old, -1)
	s.recount(k, 1)
	s.providers.put(uuid, k)
	s.writes++
}

// remove deletes uuid's entry under the lock, keeping the counts.
func (s *State) remove(uuid string) {
	old, _ := s.providers.get(uuid)
	s.recount(old, -1)
	s.providers.remove(uuid)
	s.writes++
}

// recount adds by to the counts k is in.
func (s *State) recount(k known, by int) {
	if !k.GoneSince.IsZero() {
		s.proofs += by
	}
	if k.Pending {
		s.pending += by
	}
	if !k.PausedUntil.IsZero() {
		s.paused += by
	}
}

// changedRecord notes, under the lock and before the entry is replaced,
// that uuid's record becomes r, if a store must be told.
func (s *State) changedRecord(uuid string, r Record) {
	if s.shared == nil {
		return
	}
	if old, ok := s.providers.get(uuid); !ok || !sameRecord(old.Record, r) {
		s.shared[uuid] = struct{}{}
	}
}

// changedSeen marks uuid's shared entry to be stored when the provider
// was seen at a new generation: the entry keeps what a peer taking it
// over may trust instead of reading it (recordshare.go, takeover.go).
func (s *State) changedSeen(uuid string, old, k known) {
	if s.shared != nil && k.Exists && k.Generation != "" && k.Generation != old.Generation {
		s.shared[uuid] = struct{}{}
	}
}

// invalidate drops what was seen of a provider but keeps its record —
// what the engine manages on it, its proofs, its plugin — so a re-read
// still knows which traits are its own.
func (s *State) invalidate(uuid string) {
	s.mu.Lock()
	s.dirty = true
	if k, ok := s.providers.get(uuid); ok {
		s.providers.put(uuid, known{Record: k.Record})
		s.writes++
	}
	s.mu.Unlock()
}

// update changes one provider's entry under the lock.
func (s *State) update(uuid string, f func(*known)) {
	s.mu.Lock()
	s.dirty = true
	old, _ := s.providers.get(uuid)
	k := old
	f(&k)
	s.changedRecord(uuid, k.Record)
	s.changedSeen(uuid, old, k)
	s.set(uuid, old, k)
	s.mu.Unlock()
}

// drop forgets a provider that is gone from Placement: its shared record
// entry is deleted too.
func (s *State) drop(uuid string) {
	s.mu.Lock()
	s.dirty = true
	if s.shared != nil {
		s.shared[uuid] = struct{}{}
	}
	s.remove(uuid)
	s.mu.Unlock()
}

// forget forgets a provider another manager owns now: its shared record
// entry is that manager's to keep, so it is left alone.
func (s *State) forget(uuid string) {
	s.mu.Lock()
	s.dirty = true
	delete(s.shared, uuid)
	s.remove(uuid)
	s.mu.Unlock()
}

// Microversion is the Placement microversion recorded with the state, for
// placement.Config.Microversion ("" if none).
func (s *State) Microversion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func (s *State) setMicroversion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != s.version {
		s.version, s.dirty = v, true
	}
}
