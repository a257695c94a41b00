package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// The one list of a cycle's steps (sweep) and the three kinds of run as
// selections of it: a full cycle (Cycle, Plan), the named nodes of
// `--node` (CycleOnly) and a node sync driven by notifications
// (SyncNodes). A step added to sweep is in every run it belongs to.

// run is what sets the kinds of run apart: how they observe the source
// and find this engine's providers, and whether they judge the whole
// scope.
type run struct {
	// whole runs the steps that judge the whole scope: the round (proofs
	// count full cycles only), the orphans, the reaping, every hold.
	whole bool
	// observe reads the nodes, then the instances, and derives the
	// desired providers (ok false: no writes).
	observe func(ctx context.Context, c *cycle) (listedNodes, []Desired, bool)
	// providers finds this engine's providers and their generations: a
	// listing of Placement, or the cache (a node sync lists nothing).
	providers func(ctx context.Context, c *cycle, desired []Desired) (map[string]placement.Generation, bool)
	// gone, for a node sync, reserves the providers of the nodes asked
	// that the source did not return (nil: none to judge).
	gone func(ctx context.Context, c *cycle, listed map[string]placement.Generation)
}

// fullRun is a cycle over every node in scope.
var fullRun = run{
	whole: true,
	observe: func(ctx context.Context, c *cycle) (listedNodes, []Desired, bool) {
		return c.observe(ctx, c.e.pol.Scope.Request())
	},
	providers: func(ctx context.Context, c *cycle, desired []Desired) (map[string]placement.Generation, bool) {
		listed, ok := c.listProviders(ctx)
		if ok {
			c.listOthers(ctx, desired, listed)
		}
		return listed, ok
	},
}

// sweep is the reconcile of r's nodes, step by step in their order. A
// step that fails ends it before any write that would depend on it.
func (c *cycle) sweep(ctx context.Context, r run) {
	if r.whole {
		c.countRound()
	}
	if !c.negotiated(ctx) {
		return
	}
	nodes, desired, ok := r.observe(ctx, c)
	if !ok {
		return
	}
	defer c.e.spare.give(c.spare) // nothing keeps them past the cycle
	c.whole = r.whole
	c.enter(r.whole) // the writes of two runs never interleave (order.go)
	if c.outran = !r.whole && c.outrun(); c.outran {
		return // a full cycle that read later has written: nothing to add
	}
	listed, ok := c.own(ctx, r, desired)
	if !ok {
		c.quarantine(ctx, nil) // the outcomes alone: the providers are unknown
		return
	}
	c.doubts(ctx, r, nodes, desired, listed)
	// Beside nova, the holds that change go first, each with the inventory
	// it guards in one write (hold.go), and are released after the
	// deletions, once nothing is left allocatable.
	nova := c.e.pol.Nova.Enabled
	if why, _ := c.halted(); nova && why == "" {
		c.placeHolds(ctx, desired, listed)
	}
	c.syncAll(ctx, desired, listed)
	if why, _ := c.halted(); why == "" {
		c.observed(desired, r.whole)
	}
	if why, _ := c.halted(); r.whole && why == "" {
		c.reapVanished(ctx, listed)
	}
	if c.strangers && r.whole {
		c.reportStrangers(ctx, nodes, listed)
	}
	if why, _ := c.halted(); nova && why == "" {
		if r.whole {
			c.settleHolds(ctx, nodes, desired, listed)
		} else {
			c.settleNamedHolds(ctx, desired, listed)
		}
	}
	if r.whole {
		c.countPauses()
	}
	c.recordAfter(ctx)
}

// doubts are the steps before any sync: orphans claimed and what a
// departed owner left behind adopted, then every doubt reserved — a
// quarantined node's provider, and those of unlisted nodes, whose
// deletion proofs are asked now and acted on after the syncs.
func (c *cycle) doubts(ctx context.Context, r run, nodes listedNodes, desired []Desired, listed map[string]placement.Generation) {
	if r.whole {
		c.claimOrphans(ctx, desired, listed)
		c.adoptLeft(ctx, listed) // leftbehind.go
	}
	c.quarantine(ctx, listed) // doubt.go
	if why, _ := c.halted(); r.whole && why == "" {
		c.doubtVanished(ctx, nodes, desired, listed) // deletion.go
	}
	if r.gone != nil {
		r.gone(ctx, c, listed)
	}
}

// own finds this engine's providers and, before the first write, makes
// the ownership record hold all this run may add or create (record.go):
// the writer comes from that record, so nothing is written before it.
func (c *cycle) own(ctx context.Context, r run, desired []Desired) (map[string]placement.Generation, bool) {
	listed, ok := r.providers(ctx, c, desired)
	if !ok {
		return nil, false
	}
	if err := c.recordIntent(ctx, desired, listed); err != nil {
		c.fail(ErrState, "", fmt.Sprintf("record ownership before writing: %v; no writes this cycle", err))
		return nil, false
	}
	return listed, true
}

// listProviders lists this engine's providers — one request tells which
// changed since last seen — and the foreign owners' seen before (quiet.go).
func (c *cycle) listProviders(ctx context.Context) (map[string]placement.Generation, bool) {
	c.placementFrom = time.Now()
	listed, err := c.listOwned(ctx)
	c.listed("providers", len(listed), c.placementFrom, err, nil)
	if err != nil {
		c.fail(ErrListing, "", fmt.Sprintf("list providers: %v; no writes this cycle", err))
		return nil, false
	}
	c.beginQuiet(ctx, listed)
	return listed, true
}
