package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
	// Seen is the provider as its writer last saw it, at a generation:
	// an engine taking it over trusts it, without reading the provider,
	// only while Placement still lists that generation (takeover.go).
	Seen *seenEntry `json:"seen,omitempty"`
	// Held is the class of the provider's hold beside nova, placed or
	// about to be: a hint for a peer taking the node over (fleet.go).
	Held string `json:"held,omitempty"`
}

// seenEntry is an Observed kept compact: lists that are what the record
// says (the usual case) are left out.
type seenEntry struct {
	Generation placement.Generation           `json:"g"`
	Inventory  map[string]placement.Inventory `json:"inv"`
	// Traits nil: the record's managed traits and the writer's marker.
	Traits *[]string `json:"t,omitempty"`
	// Aggregates nil: the record's managed aggregates.
	Aggregates *[]string `json:"a,omitempty"`
}

// maxEntry bounds one shared entry: a record of a provider is a few
// hundred bytes; anything near this limit was not written by an engine.
const maxEntry = 64 << 10

// decodeStored decodes one shared entry, refusing by name what no engine
// writes: an entry over maxEntry, unknown JSON, a writer that is no
// engine's owner marker.
func decodeStored(b []byte) (stored, error) {
	var st stored
	if len(b) > maxEntry {
		return st, fmt.Errorf("entry of %d bytes is over the %d-byte limit", len(b), maxEntry)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, err
	}
	if !strings.HasPrefix(st.By, OwnerTraitPrefix) || len(st.By) == len(OwnerTraitPrefix) {
		return st, fmt.Errorf("writer %q is not an engine's owner marker (%s<ID>)", cut(st.By), OwnerTraitPrefix)
	}
	return st, nil
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
func (l stateLedger) Paused(uuid string) bool {
	k, ok := l.s.get(uuid)
	return ok && !k.PausedUntil.IsZero()
}

// recordIntent makes the record hold all this run may add or create
// (record.go) before its first write — on disk, and in the store if any —
// and takes the run's writer from it. A plan's record reads the store
// when the cycle would, into its copy of the state, and writes nothing.
func (c *cycle) recordIntent(ctx context.Context, desired []Desired, listed map[string]placement.Generation) error {
	c.listedGens(desired, listed)
	var seen func(int, known)
	if judgeAtIntend {
		c.settled = make([]bool, len(desired))
		seen = func(i int, k known) { c.settled[i] = c.isSettled(desired[i], k, c.gens[i]) }
	}
	var warn string
	intend := c.rec.Intend
	if !c.whole {
		intend = c.rec.IntendPart // a node sync merges only its nodes' entries
	}
	w, err := intend(ctx, func(shared map[string][]byte) bool {
		warn = c.e.mergeShared(c.state, shared, desired, c.withLeft(listed))
		changed := c.state.intend(desired, listed, c.gens, seen)
		if c.e.pol.Nova.Enabled && c.rec.Shared() {
			c.state.wantHolds(desired) // stored by Intend's Flush (fleet.go)
		}
		return changed
	})
	c.settledAt = c.state.writeCount()
	if warn != "" {
		c.warn(warn)
	}
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
// listed as ours) and those this engine wrote, as far as the evidence
// allows (State.mergeShared). Another engine's proofs of deletion are not
// taken: its cycles are not counted with this one's. What it leaves out
// (unreadable, or not vouched for) is logged and returned as a warning
// for the report (engine reown finds what unreadable entries explained).
func (e *Engine) mergeShared(state *State, raw map[string][]byte, desired []Desired, listed map[string]placement.Generation) (warn string) {
	if raw == nil {
		return ""
	}
	ev := evidence{ours: func(uuid string) bool { _, ok := listed[uuid]; return ok },
		desired: func(uuid string) bool { return isDesired(desired, uuid) }}
	in := make(map[string]stored, len(raw))
	bad, first := 0, ""
	for uuid, b := range raw {
		st, err := decodeStored(b)
		if err != nil {
			bad, first = bad+1, fmt.Sprintf("%s: %v", cut(uuid), err)
			continue
		}
		if st.By == e.pol.OwnerTrait && e.inShare(uuid) || ev.mine(uuid) {
			in[uuid] = st
		}
	}
	if bad > 0 {
		warn = fmt.Sprintf("%d shared record entries unreadable, ignored (first %s); ", bad, first)
		e.log.Warn("shared record entries unreadable, ignored (engine reown finds what they explained)", "count", bad, "first", first)
	}
	if n, first := state.mergeShared(in, e.pol.OwnerTrait, ev); n > 0 {
		warn += fmt.Sprintf("%d shared record entries ignored (first %s): they add to a provider this engine owns and records "+
			"itself, or claim a creation of a node the source does not list; an entry is evidence, not authority", n, first)
		e.log.Warn("shared record entries ignored", "count", n, "first", first)
	}
	return warn
}

// sameRecord compares two records; nil and empty lists are equal.
func sameRecord(a, b Record) bool {
	return slices.Equal(a.Managed.Traits, b.Managed.Traits) && slices.Equal(a.Managed.Aggregates, b.Managed.Aggregates) &&
		slices.Equal(a.Retained, b.Retained) && a.GoneSince.Equal(b.GoneSince) && a.ProofRound == b.ProofRound &&
		a.Pending == b.Pending && a.Plugin == b.Plugin && a.Doubt == b.Doubt && a.DoubtGeneration == b.DoubtGeneration &&
		a.PausedUntil.Equal(b.PausedUntil) && a.PauseReason == b.PauseReason
}

// mergeRecord is what both records say may be the engine's: the union of
// what they manage and retain, and the doubt reserve local lacks. Proofs
// are taken from shared only when trusted and local has none; a pending
// creation only when trusted (the source lists the node).
func mergeRecord(local, shared Record, trustProofs, trustPending bool) Record {
	out := local
	out.Managed = Managed{Traits: union(local.Managed.Traits, shared.Managed.Traits),
		Aggregates: union(local.Managed.Aggregates, shared.Managed.Aggregates)}
	out.Retained = union(local.Retained, shared.Retained)
	out.Pending = local.Pending || shared.Pending && trustPending
	if out.Plugin == "" {
		out.Plugin = shared.Plugin
	}
	if out.Doubt == "" { // the reserve is an engine's own, whichever wrote it
		out.Doubt, out.DoubtGeneration = shared.Doubt, shared.DoubtGeneration
	}
	if out.PausedUntil.IsZero() { // an operator's pause survives the take-over
		out.PausedUntil, out.PauseReason = shared.PausedUntil, shared.PauseReason
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

// evidence is what the engine sees of a provider, against which a shared
// entry is checked before it is taken.
type evidence struct {
	ours    func(uuid string) bool // listed with this engine's marker
	desired func(uuid string) bool // the source lists its node, in scope
}

func (ev evidence) mine(uuid string) bool { return ev.ours(uuid) || ev.desired(uuid) }

// mergeShared merges the store's entries into the record. Entries the
// store lacks or holds less of are marked to be stored: a record kept in
// the file alone (before etcd) reaches the store on the first cycle.
// An entry is evidence, not authority (docs/SECURITY.md): for a provider
// this engine owns and records itself, its own record wins and an entry
// that would add to it is ignored; a pending creation is taken only for a
// node the source lists. Both are counted (refused, first).
func (s *State) mergeShared(in map[string]stored, me string, ev evidence) (refused int, first string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uuid, st := range in {
		s.notePeerHold(uuid, st.Held)
		k, had := s.providers.get(uuid)
		if had && ev.ours(uuid) {
			if !sameRecord(mergeRecord(k.Record, st.Record, false, false), k.Record) {
				refused, first = refused+1, least(first, uuid)
			}
			if st.By != me || !sameRecord(k.Record, st.Record) {
				s.markShared(uuid)
			}
			continue
		}
		if st.Pending && !k.Pending && !ev.mine(uuid) {
			refused, first = refused+1, least(first, uuid)
		}
		trust := st.By == me && st.ProofRound < s.round // a count restarted with a lost file is not this one
		merged := mergeRecord(k.Record, st.Record, trust, ev.mine(uuid))
		if !sameRecord(merged, st.Record) || st.By != me {
			s.markShared(uuid)
		}
		seen, took := takeSeen(k.Observed, st, me)
		if !had || took || !sameRecord(merged, k.Record) {
			old := k
			k.Record, k.Observed = merged, seen
			s.set(uuid, old, k)
			s.dirty = true
		}
	}
	for uuid, k := range s.providers.all() {
		if _, ok := in[uuid]; !ok && !sameRecord(k.Record, Record{}) && ev.mine(uuid) {
			s.markShared(uuid)
		}
	}
	return refused, first
}

// maxSeenEntry bounds an entry that carries seen: one larger is stored
// without it (its taker reads the provider, 3 requests more). The
// Kubernetes store keeps 100,000 providers' entries in 64 ConfigMaps,
// 1,563 each: at 512 bytes and a 36-byte key, 856 KB, under the API
// server's 1 MiB an object.
const maxSeenEntry = 512

// encodeStored encodes st, without its Seen when that makes the entry
// larger than maxSeenEntry.
func encodeStored(uuid string, st stored) []byte {
	b, err := json.Marshal(st)
	if err == nil && st.Seen != nil && len(b) > maxSeenEntry {
		st.Seen = nil
		b, err = json.Marshal(st)
	}
	if err != nil { // a Record always encodes; never store half of one
		panic(fmt.Sprintf("encode the record of %s: %v", uuid, err))
	}
	return b
}

// seenOf is what a shared entry keeps of o: nothing unless it was seen
// at a generation; lists equal to what the record implies are left out.
func seenOf(o Observed, r Record, me string) *seenEntry {
	if !o.Exists || o.Generation == "" {
		return nil
	}
	e := &seenEntry{Generation: o.Generation, Inventory: o.Inventory}
	if t := slices.Clone(o.Traits); !sameSet(t, seenTraits(r, me)) {
		e.Traits = &t
	}
	if a := slices.Clone(o.Aggregates); !sameSet(a, r.Managed.Aggregates) {
		e.Aggregates = &a
	}
	return e
}

// seenTraits is the traits a seenEntry without its own list stands for.
func seenTraits(r Record, by string) []string {
	return sortedSet(append(slices.Clone(r.Managed.Traits), by))
}

// observed is the Observed e stands for, in an entry of r written by by.
func (e *seenEntry) observed(r Record, by string) Observed {
	o := Observed{Exists: true, Generation: e.Generation, Inventory: e.Inventory,
		Traits: seenTraits(r, by), Aggregates: slices.Clone(r.Managed.Aggregates)}
	if e.Traits != nil {
		o.Traits = *e.Traits
	}
	if e.Aggregates != nil {
		o.Aggregates = *e.Aggregates
	}
	return o
}

// takeSeen is the observation to keep of a provider not listed as ours:
// the entry's, when local has none or another engine wrote it later, and
// it carries its writer's own marker (what the writer saw of a provider
// it owned). It is only a cache: syncOne trusts it while the listed
// generation equals its own, and reads the provider otherwise.
func takeSeen(local Observed, st stored, me string) (Observed, bool) {
	if st.Seen == nil || st.Seen.Generation == "" || st.Seen.Generation == local.Generation {
		return local, false
	}
	s := st.Seen.observed(st.Record, st.By)
	if !slices.Contains(s.Traits, st.By) || local.Generation != "" && st.By == me {
		return local, false // not the writer's own view, or ours and no newer than the state
	}
	return s, true
}

// least is the lesser of two uuids, "" counting as none: the first of a
// count is the same whatever the map's order.
func least(a, b string) string {
	if a == "" || b < a {
		return b
	}
	return a
}

// markShared marks uuid's entry to be stored; nil in a plan's copy, which
// stores nothing.
func (s *State) markShared(uuid string) {
	if s.shared != nil {
		s.shared[uuid] = struct{}{}
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
		held := cmp.Or(s.holds[uuid], s.holdWanted[uuid])
		put[uuid] = encodeStored(uuid, stored{By: me, Record: k.Record, Seen: seenOf(k.Observed, k.Record, me), Held: held})
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
	st, err := decodeStored(b)
	if err != nil {
		return Record{}, false, fmt.Errorf("shared entry of %s: %w", cut(uuid), err)
	}
	return e.state.mergedView(local, st, e.pol.OwnerTrait), true, nil
}

// mergedView is what mergeShared would make of local and st.
func (s *State) mergedView(local Record, st stored, me string) Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mergeRecord(local, st.Record, st.By == me && st.ProofRound < s.round, true)
}
