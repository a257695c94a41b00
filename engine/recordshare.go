package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/engine/internal/record"
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
type RecordStore = record.Store

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
	e.rec.Share(store, reload)
	e.state.share(store != nil)
}

// ledger is state as the record's Ledger: entries stored under this
// engine's owner marker.
func (e *Engine) ledger(state *State) record.Ledger {
	return stateLedger{state, e.pol.OwnerTrait}
}

type stateLedger struct {
	s  *State
	me string
}

func (l stateLedger) Save() error { return l.s.Save() }
func (l stateLedger) TakeShared() (map[string][]byte, []string, []string) {
	return l.s.takeShared(l.me)
}
func (l stateLedger) Reshare(uuids []string) { l.s.reshare(uuids) }

// recordIntent makes the record hold all this run may add or create
// (record.go) before its first write — on disk, and in the store if any —
// and takes the run's writer from it. A plan's record reads the store
// when the cycle would, into its copy of the state, and writes nothing.
func (c *cycle) recordIntent(ctx context.Context, desired []Desired, listed map[string]placement.Generation) error {
	c.gens = make([]placement.Generation, len(desired))
	var seen func(int, known)
	if judgeAtIntend {
		c.settled = make([]bool, len(desired))
		seen = func(i int, k known) { c.settled[i] = c.isSettled(desired[i], k, c.gens[i]) }
	}
	w, err := c.rec.Intend(ctx, func(shared map[string][]byte) bool {
		c.e.mergeShared(c.state, shared, desired, listed)
		return c.state.intend(desired, listed, c.gens, seen)
	})
	c.settledAt = c.state.writeCount()
	if err != nil {
		return err
	}
	c.w = w
	return nil
}

// recordAfter stores what the cycle's writes changed in the record (what
// is no longer managed, providers deleted, proofs): nothing depends on it
// yet, so a failure is only reported, and retried next cycle.
func (c *cycle) recordAfter(ctx context.Context) {
	if err := c.rec.Flush(ctx); err != nil {
		c.mu.Lock()
		c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("shared record not updated after the writes (retried next cycle): %v", err))
		c.mu.Unlock()
	}
}

// mergeShared merges the store's entries raw (nil: none read) into the
// record in state: those of providers this run may write (desired or
// listed as ours) and those this engine wrote. Another engine's proofs of
// deletion are not taken: its cycles are not counted with this one's.
// Unreadable entries are left out and logged (engine reown finds what they
// explained).
func (e *Engine) mergeShared(state *State, raw map[string][]byte, desired []Desired, listed map[string]placement.Generation) {
	if raw == nil {
		return
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
	raw, err := e.rec.Entries(ctx)
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
