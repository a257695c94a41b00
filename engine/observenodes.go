package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/engine/placement"
)

// Node syncs in observe mode (docs/OBSERVE.md): a notification, or the
// probe, makes the engine read those nodes and plan what the rules would
// write to their providers, without writing, so the drift of a node is
// as of its last notification, not the last full cycle.

// ObserveNodes is SyncNodes as a plan: the nodes read from src, then the
// instances on them, and the cycle's steps for them over copies of the
// engine's state whose record hands out the recording writer. Nothing is
// written to Placement; the report's outcomes carry what a node sync
// would change (Written stays empty). Beside nova too: a plan places no
// hold. A node the source did not return whose provider is named as it
// and no engine's is reported as a full cycle does (ReasonUnowned). It
// may run beside a full cycle's plan: each has its own copies.
func (e *Engine) ObserveNodes(ctx context.Context, src NodeReader, uuids []string) (r NodeSyncReport) {
	c := e.newPlan()
	uuids = distinctUUIDs(uuids)
	r.Asked = len(uuids)
	defer func() { c.finishNodeSync(&r); c.release() }()
	if !c.negotiated(ctx) {
		r.FullCycle = "Placement refused the recorded microversion"
		return r
	}
	ours := c.ours(uuids) // before the sweep: its planned reservations change the copies
	c.sweep(ctx, nodeRun(src, uuids, &r))
	if why, _ := c.halted(); why == "" && len(c.r.Errors) == 0 {
		c.strangersAmong(ctx, r.Missing, ours)
	}
	return r
}

// strangersAmong is reportStrangers for the nodes a node sync asked for
// and the source did not return, but for ours (reported pending deletion
// by goneNow): one read of each provider, nothing listed.
func (c *cycle) strangersAmong(ctx context.Context, missing, ours []string) {
	s := c.e.pol.Scope // read_nodes is not scoped: a node not returned is gone, whatever the scope
	var out []string
	for _, u := range missing {
		if slices.Contains(ours, u) {
			continue // reserved as gone (goneNow): no_node already
		}
		p, err := c.e.pc.GetProvider(ctx, u)
		if errors.Is(err, placement.ErrNotFound) {
			continue
		}
		if err != nil {
			c.warn(fmt.Sprintf("provider of node %s, not returned by the source, not read: %v", u, err))
			return
		}
		if p.Name == p.UUID && p.ParentUUID == nil && s.HoldsPartitionOf(u) {
			out = append(out, u)
		}
	}
	c.kept(out, ReasonUnowned, "a provider named as a node the source does not return, and not this engine's "+
		"(nova-compute's?): its node is gone; observe mode reports it, nothing writes it")
}
