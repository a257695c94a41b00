package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/engine/placement"
)

// Providers of nodes the source does not list that no engine writes:
// nova-compute's, while observe mode watches beside it before a migration
// (docs/OBSERVE.md). An engine deletes only what it owns, so no cycle
// looks for them; observe mode reports them as drift (no_node).

// ReasonUnowned: a provider named as a node (its name is its uuid, as
// nova's Ironic driver names them) whose node the source does not list,
// not this engine's: reported, never written.
const ReasonUnowned = "unowned_no_node"

// Observe is Plan, plus the providers of unlisted nodes no engine owns,
// reported as kept (ReasonUnowned): observe mode's cycle.
func (e *Engine) Observe(ctx context.Context) Report {
	c := e.newPlan()
	c.strangers = true
	return c.run(ctx, fullRun)
}

// reportStrangers lists every provider (one request) and reports the
// root providers named by their uuid whose node the source does not list
// and that are not this engine's (ours). A scope by shard or conductor
// group cannot tell another scope's node from a deleted one by the
// listing: the source's proof of deletion tells (provenStrangers).
func (c *cycle) reportStrangers(ctx context.Context, nodes listedNodes, ours map[string]placement.Generation) {
	s := c.e.pol.Scope
	ps, err := c.e.pc.ListProviders(ctx, nil)
	if err != nil {
		c.warn(fmt.Sprintf("providers of unlisted nodes owned by no engine not looked for: %v", err))
		return
	}
	listed := setOf(nodes.uuids)
	var out []string
	for _, p := range ps {
		u := strings.ToLower(p.UUID)
		if _, mine := ours[u]; mine || p.Name != p.UUID || p.ParentUUID != nil || listed[u] || !s.HoldsPartitionOf(u) {
			continue
		}
		out = append(out, u)
	}
	if len(s.Shards) > 0 || len(s.ConductorGroups) > 0 {
		out = c.provenStrangers(ctx, out)
	}
	c.kept(out, ReasonUnowned, "a provider named as a node the source does not list, and not this engine's "+
		"(nova-compute's?): its node is gone; observe mode reports it, nothing writes it")
}
