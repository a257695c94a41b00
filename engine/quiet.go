package engine

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// quiet remembers, between the cycles of one process, the providers the
// engine leaves as they are until their generation moves: another
// manager's (looked at again only when its generation changes), and the
// ones it fully reserved because their node is gone but they cannot be
// deleted (blocked). Any change to a provider bumps its generation, so
// an unchanged one costs no request. It is memory only: a new process
// looks once more, which costs what one cycle did before.
type quiet struct {
	mu       sync.Mutex
	foreign  map[string]foreignSeen          // uuid -> its owner and generation when seen
	reserved map[string]placement.Generation // uuid -> generation our reservation left
	// present: unlisted nodes the source proved present (out of scope),
	// and when: asked again only after DeleteGrace.
	present map[string]time.Time
	// blocked: providers of nodes proven gone that Placement would not
	// let go (allocations, a refused delete), and when that was seen: not
	// tried again before DeleteGrace while their reservation holds.
	blocked map[string]blockedSeen
	// This cycle's listings: ours (by our marker) and other owners'.
	listed, others map[string]placement.Generation
	// sweptHeld: the partitions held when other owners' providers were
	// last searched for ones a departed peer left behind (leftbehind.go).
	sweptHeld string
	// anyForeign says foreign is not empty: an idle cycle's syncs then
	// skip the lock (100,000 of them).
	anyForeign atomic.Bool
}

type blockedSeen struct {
	code, why string
	at        time.Time
}

type foreignSeen struct {
	owner string
	gen   placement.Generation
}

// clone is a copy for a plan: what the plan sees (another owner's
// provider, a node proven present) is not remembered by the engine, so a
// plan the daemon runs between its cycles changes nothing they do.
func (q *quiet) clone() *quiet {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := &quiet{foreign: maps.Clone(q.foreign), reserved: maps.Clone(q.reserved), present: maps.Clone(q.present),
		blocked: maps.Clone(q.blocked), listed: q.listed, others: q.others}
	c.anyForeign.Store(len(c.foreign) > 0)
	return c
}

// sawForeign records a provider left alone as owner's, at gen.
func (q *quiet) sawForeign(uuid, owner string, gen placement.Generation) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.foreign == nil {
		q.foreign = map[string]foreignSeen{}
	}
	q.foreign[uuid] = foreignSeen{owner, gen}
	q.anyForeign.Store(true)
}

// sawReserved records that a blocked provider is fully reserved at gen.
func (q *quiet) sawReserved(uuid string, gen placement.Generation) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.reserved == nil {
		q.reserved = map[string]placement.Generation{}
	}
	q.reserved[uuid] = gen
}

// stillReserved says whether a provider this cycle lists as ours is at
// the generation its reservation left: then it is still fully reserved.
func (q *quiet) stillReserved(uuid string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	g, ok := q.reserved[uuid]
	return ok && g != "" && q.listed[uuid] == g
}

// owners lists the foreign owners seen, sorted, and forgets the entries
// of providers that became ours.
func (q *quiet) owners(ours map[string]placement.Generation) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for uuid, f := range q.foreign {
		if _, mine := ours[uuid]; mine {
			delete(q.foreign, uuid)
		} else if !slices.Contains(out, f.owner) { // a handful of owners
			out = append(out, f.owner)
		}
	}
	q.anyForeign.Store(len(q.foreign) > 0)
	for uuid := range q.reserved {
		if _, mine := ours[uuid]; !mine {
			delete(q.reserved, uuid)
			delete(q.blocked, uuid)
		}
	}
	slices.Sort(out)
	return out
}

// leftAlone returns the error syncOne would return for a provider owned
// by another manager that has not changed since the engine last looked
// (nil when it must be looked at).
func (q *quiet) leftAlone(uuid string, mayTakeOver func(string) bool) error {
	if !q.anyForeign.Load() {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	f, ok := q.foreign[uuid]
	if !ok || q.others[uuid] != f.gen || f.gen == "" || mayTakeOver(f.owner) {
		return nil
	}
	return fmt.Errorf("provider %s exists and is owned by %s (unchanged since last read): %w", uuid, f.owner, errOwned)
}

// beginQuiet takes this cycle's listing of our providers and lists the
// providers of the foreign owners seen before, one request per owner: a
// failed listing only means those providers are read again.
func (c *cycle) beginQuiet(ctx context.Context, listed map[string]placement.Generation) {
	e, q := c.e, c.quiet
	others := map[string]placement.Generation{}
	for _, owner := range q.owners(listed) {
		gens, err := e.pc.ProviderGenerations(ctx, url.Values{"required": {owner}}, 0)
		if err != nil {
			e.log.Warn("providers of another owner not listed: they are read again", "owner", owner, "err", err)
			continue
		}
		for uuid, g := range gens {
			others[uuid] = g
		}
	}
	q.mu.Lock()
	q.listed, q.others = listed, others
	q.mu.Unlock()
}

// toAsk splits unlisted providers into those whose node the source must
// be asked about and those it proved present less than grace ago: a node
// out of scope is not asked about every cycle. Waiting only delays a
// deletion, which needs two proofs grace apart anyway.
func (q *quiet) toAsk(candidates []string, now time.Time, grace time.Duration) (ask, present []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.present) == 0 || grace <= 0 {
		return candidates, nil
	}
	for _, u := range candidates {
		if at, ok := q.present[u]; ok && now.Sub(at) < grace {
			present = append(present, u)
		} else {
			ask = append(ask, u)
		}
	}
	return ask, present
}

// sawPresent records the nodes proven present at now, and forgets the
// ones proven deleted; without a grace nothing is kept (toAsk asks all).
func (q *quiet) sawPresent(present, deleted []string, now time.Time, grace time.Duration) {
	if grace <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, u := range deleted {
		delete(q.present, u)
	}
	if q.present == nil {
		q.present = map[string]time.Time{}
	}
	for _, u := range present {
		q.present[u] = now
	}
}

// askProofs asks the source about the unlisted nodes it did not prove
// present less than DeleteGrace ago, and counts those as present again.
func (c *cycle) askProofs(ctx context.Context, checker DeletionChecker, candidates []string) (deleted, present []string, err error) {
	e := c.e
	ask, known := c.quiet.toAsk(candidates, e.now(), e.opts.DeleteGrace)
	if len(ask) > 0 {
		deleted, present, err = checker.ConfirmDeleted(ctx, ask)
		c.quiet.sawPresent(present, deleted, e.now(), e.opts.DeleteGrace)
	}
	return deleted, append(present, known...), err
}

// deleteOrWait is deleteOne for a provider of a node proven gone, except
// that one found blocked (in use, or its delete refused) less than
// DeleteGrace ago, and still at the generation its reservation left, is
// not read again: blocked as before, with no request. Freeing an
// allocation (DELETE /allocations/{consumer}) does not move a provider's
// generation, so only time says when to look again; waiting only delays
// the deletion of a provider that is fully reserved meanwhile.
func (c *cycle) deleteOrWait(ctx context.Context, uuid string) (code, why string, err error) {
	e := c.e
	if b, ok := c.quiet.stillBlocked(uuid, e.now(), e.opts.DeleteGrace); ok {
		return b.code, b.why, nil
	}
	code, why, err = c.deleteOne(ctx, uuid)
	if e.opts.DeleteGrace > 0 { // a plan's quiet book is its own copy
		c.quiet.sawBlocked(uuid, blockedSeen{code, why, e.now()})
	}
	return code, why, err
}

// sawBlocked records a delete's result: blocked (b.code set) or not.
func (q *quiet) sawBlocked(uuid string, b blockedSeen) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if b.code == "" {
		delete(q.blocked, uuid)
		return
	}
	if q.blocked == nil {
		q.blocked = map[string]blockedSeen{}
	}
	q.blocked[uuid] = b
}

// stillBlocked returns how a provider was blocked, if that was less than
// grace ago and it is still fully reserved at the generation listed.
func (q *quiet) stillBlocked(uuid string, now time.Time, grace time.Duration) (blockedSeen, bool) {
	q.mu.Lock()
	b, ok := q.blocked[uuid]
	q.mu.Unlock()
	if !ok || grace <= 0 || now.Sub(b.at) >= grace || !q.stillReserved(uuid) {
		return blockedSeen{}, false
	}
	return b, true
}
