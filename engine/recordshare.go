package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/engine/placement"
)

// The shared ownership record.
//
// The state file makes kill -9 exact, but not the loss of a host: a peer
// that takes the dead engine's nodes over would not know which traits
// and aggregates the dead engine added, and would keep them for ever (a
// CUSTOM_GPU left on nodes without a GPU). With [coord] etcd the record
// is also kept in a RecordStore, one entry per provider, written before
// the writes that depend on it and read again whenever the engine is
// given nodes another engine may have written. The store refuses the
// writes of an engine whose lease may be gone, as the cycle's fence
// refuses its Placement writes. The state file stays the record of an
// engine without etcd, and the cache of both.

// RecordStore keeps the ownership record where whichever engine manages
// a provider next finds it: with [coord] etcd, in etcd under the fleet's
// prefix (internal/coord). Entries are opaque to it.
type RecordStore interface {
	// Load returns every provider's stored entry, by uuid.
	Load(ctx context.Context) (map[string][]byte, error)
	// Store writes put and deletes del, in a bounded number of requests.
	// It fails once the writer may no longer hold what it writes for.
	Store(ctx context.Context, put map[string][]byte, del []string) error
}

// sharing is the engine's side of a RecordStore.
type sharing struct {
	store  RecordStore
	reload bool // read the store before the next cycle's first write
}

// stored is one provider's entry in a RecordStore.
type stored struct {
	By string `json:"by"` // the owner marker of the engine that wrote it
	Record
}

// ShareRecord makes store hold the ownership record from the next cycle
// on (nil: the state file alone). reload says the engine was given nodes
// another engine may have written, so the store must be read again before
// the next write; the first store is always read. Not safe during a cycle.
func (e *Engine) ShareRecord(store RecordStore, reload bool) {
	e.rec.reload = e.rec.reload || reload || e.rec.store == nil && store != nil
	e.rec.store = store
	e.state.share(store != nil)
}

// recordIntent makes the record hold all this cycle may add or create
// (record.go) before its first write: on disk, and in the store if any.
// A plan reads the store when the cycle would, into its copy of the
// state, and writes nothing to it.
func (c *cycle) recordIntent(ctx context.Context, desired []Desired, listed map[string]placement.Generation) error {
	if err := c.e.readShared(ctx, c.state, desired, listed, c.plan == nil); err != nil {
		return fmt.Errorf("read the shared record: %w", err)
	}
	c.gens = make([]placement.Generation, len(desired))
	var seen func(int, known)
	if c.plan == nil && judgeAtIntend { // a plan records each provider's changes
		c.settled = make([]bool, len(desired))
		seen = func(i int, k known) { c.settled[i] = c.isSettled(desired[i], k, c.gens[i]) }
	}
	changed := c.state.intend(desired, listed, c.gens, seen)
	c.settledAt = c.state.writeCount()
	if changed {
		if err := c.state.Save(); err != nil {
			return err
		}
	}
	if c.plan != nil {
		return nil
	}
	if err := c.e.flushShared(ctx, c.state); err != nil {
		return fmt.Errorf("shared record: %w", err)
	}
	return nil
}

// recordAfter stores what the cycle's writes changed in the record (what
// is no longer managed, providers deleted, proofs): nothing depends on it
// yet, so a failure is only reported, and retried next cycle.
func (c *cycle) recordAfter(ctx context.Context) {
	if c.plan != nil {
		return
	}
	if err := c.e.flushShared(ctx, c.state); err != nil {
		c.mu.Lock()
		c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("shared record not updated after the writes (retried next cycle): %v", err))
		c.mu.Unlock()
	}
}

// loadShared merges the store's entries into the record in state, when
// due: those of providers this cycle may write (desired or listed as
// ours) and those this engine wrote. Another engine's proofs of deletion
// are not taken: its cycles are not counted with this one's.
func (e *Engine) loadShared(ctx context.Context, state *State, desired []Desired, listed map[string]placement.Generation) error {
	return e.readShared(ctx, state, desired, listed, true)
}

// readShared is loadShared; a plan (!cycle) reads the store as the next
// cycle would, into its copy of the state, and leaves the read due.
func (e *Engine) readShared(ctx context.Context, state *State, desired []Desired, listed map[string]placement.Generation, cycle bool) error {
	if e.rec.store == nil || !e.rec.reload {
		return nil
	}
	raw, err := e.rec.store.Load(ctx)
	if err != nil {
		return err
	}
	mine := func(uuid string) bool {
		_, ok := listed[uuid]
		return ok || isDesired(desired, uuid)
	}
	in := make(map[string]stored, len(raw))
	bad, first := 0, ""
	for uuid, b := range raw {
		var st stored
		if err := json.Unmarshal(b, &st); err != nil {
			bad, first = bad+1, fmt.Sprintf("%s: %v", cut(uuid), err)
			continue
		}
		if st.By == e.pol.OwnerTrait || mine(uuid) {
			in[uuid] = st
		}
	}
	if bad > 0 {
		e.log.Warn("shared record entries unreadable, ignored (engine reown finds what they explained)", "count", bad, "first", first)
	}
	state.mergeShared(in, e.pol.OwnerTrait, mine)
	if cycle {
		e.rec.reload = false
	}
	return nil
}

// flushShared stores the entries of state changed since the last store.
func (e *Engine) flushShared(ctx context.Context, state *State) error {
	if e.rec.store == nil {
		return nil
	}
	put, del, uuids := state.takeShared(e.pol.OwnerTrait)
	if len(uuids) == 0 {
		return nil
	}
	if err := e.rec.store.Store(ctx, put, del); err != nil {
		state.reshare(uuids)
		return err
	}
	return nil
}

// sameRecord compares two records; nil and empty lists are equal.
func sameRecord(a, b Record) bool {
	return slices.Equal(a.Managed.Traits, b.Managed.Traits) && slices.Equal(a.Managed.Aggregates, b.Managed.Aggregates) &&
		slices.Equal(a.Retained, b.Retained) && a.GoneSince.Equal(b.GoneSince) && a.ProofRound == b.ProofRound &&
		a.Pending == b.Pending && a.Plugin == b.Plugin && a.Doubt == b.Doubt && a.DoubtGeneration == b.DoubtGeneration
}

// mergeRecord is what both records say may be the engine's: the union of
// what they manage and retain, and the doubt reserve local lacks. Proofs
// are taken from shared only when trusted and local has none.
func mergeRecord(local, shared Record, trustProofs bool) Record {
	out := local
	out.Managed = Managed{Traits: union(local.Managed.Traits, shared.Managed.Traits),
		Aggregates: union(local.Managed.Aggregates, shared.Managed.Aggregates)}
	out.Retained = union(local.Retained, shared.Retained)
	out.Pending = local.Pending || shared.Pending
	if out.Plugin == "" {
		out.Plugin = shared.Plugin
	}
	if out.Doubt == "" { // the reserve is an engine's own, whichever wrote it
		out.Doubt, out.DoubtGeneration = shared.Doubt, shared.DoubtGeneration
	}
	if out.GoneSince.IsZero() && trustProofs {
		out.GoneSince, out.ProofRound = shared.GoneSince, shared.ProofRound
	}
	return out
}

// union is a sorted set of a and b; a itself when it holds all of b.
func union(a, b []string) []string {
	if !slices.ContainsFunc(b, func(x string) bool { return !slices.Contains(a, x) }) {
		return a
	}
	return sortedSet(slices.Concat(a, b))
}

// share starts (or stops) collecting the uuids whose record changes.
func (s *State) share(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !on:
		s.shared = nil
	case s.shared == nil:
		s.shared = map[string]struct{}{}
	}
}

// mergeShared merges the store's entries into the record. Entries the
// store lacks or holds less of are marked to be stored: a record kept in
// the file alone (before etcd) reaches the store on the first cycle.
func (s *State) mergeShared(in map[string]stored, me string, mine func(uuid string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := func(uuid string) {
		if s.shared != nil { // nil in a plan's copy: it stores nothing
			s.shared[uuid] = struct{}{}
		}
	}
	for uuid, st := range in {
		k, had := s.providers.get(uuid)
		trust := st.By == me && st.ProofRound < s.round // a count restarted with a lost file is not this one
		merged := mergeRecord(k.Record, st.Record, trust)
		if !sameRecord(merged, st.Record) || st.By != me {
			mark(uuid)
		}
		if !had || !sameRecord(merged, k.Record) {
			old := k
			k.Record = merged
			s.set(uuid, old, k)
			s.dirty = true
		}
	}
	for uuid, k := range s.providers.all() {
		if _, ok := in[uuid]; !ok && !sameRecord(k.Record, Record{}) && mine(uuid) {
			mark(uuid)
		}
	}
}

// takeShared encodes the changed entries: put for those still known, del
// for those dropped. It hands the uuids over; reshare gives them back.
func (s *State) takeShared(me string) (put map[string][]byte, del, uuids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.shared) == 0 {
		return nil, nil, nil
	}
	put = make(map[string][]byte, len(s.shared))
	for uuid := range s.shared {
		uuids = append(uuids, uuid)
		k, ok := s.providers.get(uuid)
		if !ok {
			del = append(del, uuid)
			continue
		}
		b, err := json.Marshal(stored{By: me, Record: k.Record})
		if err != nil { // a Record always encodes; never store half of one
			panic(fmt.Sprintf("encode the record of %s: %v", uuid, err))
		}
		put[uuid] = b
	}
	clear(s.shared)
	slices.Sort(del)
	return put, del, uuids
}

// reshare marks uuids to be stored again: their store failed.
func (s *State) reshare(uuids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared != nil {
		for _, u := range uuids {
			s.shared[u] = struct{}{}
		}
	}
}

// RecordNow is uuid's record as the next cycle would read it: the
// state's, merged with the shared store's entry under [coord]. It
// changes nothing; explain shows it.
func (e *Engine) RecordNow(ctx context.Context, uuid string) (Record, bool, error) {
	local, ok := e.state.Record(uuid)
	if e.rec.store == nil {
		return local, ok, nil
	}
	raw, err := e.rec.store.Load(ctx)
	if err != nil {
		return Record{}, false, err
	}
	b, shared := raw[uuid]
	if !shared {
		return local, ok, nil
	}
	var st stored
	if err := json.Unmarshal(b, &st); err != nil {
		return Record{}, false, fmt.Errorf("shared entry of %s: %w", cut(uuid), err)
	}
	return e.state.mergedView(local, st, e.pol.OwnerTrait), true, nil
}

// mergedView is what mergeShared would make of local and st.
func (s *State) mergedView(local Record, st stored, me string) Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mergeRecord(local, st.Record, st.By == me && st.ProofRound < s.round)
}
