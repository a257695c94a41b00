package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// OnlyReport says what a cycle limited to some nodes did (CycleOnly).
type OnlyReport struct {
	Report
	// Unknown lists the nodes asked for that the source does not list in
	// this engine's scope; when any is, nothing was written.
	Unknown []string `json:"unknown,omitempty"`
}

// CycleOnly runs one cycle whose writes are limited to the providers of
// the nodes named in only (a uuid, in any case, or the name the source
// reports). It lists the nodes, then the instances, as a cycle does, so
// a consumer placed meanwhile is seen; then, for the named nodes alone,
// the quarantine, beside nova the holds they lack, and the syncs. It
// deletes nothing, claims no orphan, counts no deletion proof and
// releases only the named nodes' holds: those judge the whole scope and
// are a full cycle's. A name the source does not list in scope is
// reported in Unknown, and then nothing is written.
func (e *Engine) CycleOnly(ctx context.Context, only []string) OnlyReport {
	c := e.newCycle()
	c.e.emit(CycleStarted{At: c.start})
	var unknown []string
	defer c.release()
	c.sweep(ctx, namedRun(only, &unknown))
	return OnlyReport{Report: c.finish(), Unknown: unknown}
}

// namedRun is the selection of a cycle's steps for the nodes named in
// only; the names that matched no node in scope go to *unknown.
func namedRun(only []string, unknown *[]string) run {
	return run{
		observe: func(ctx context.Context, c *cycle) (listedNodes, []Desired, bool) {
			desired, u, ok := c.observeOnly(ctx, only)
			*unknown = u
			return listedNodes{}, desired, ok && len(u) == 0
		},
		providers: func(ctx context.Context, c *cycle, _ []Desired) (map[string]placement.Generation, bool) {
			return c.listProviders(ctx)
		},
	}
}

// observeOnly lists every node, then every instance (the order of a
// cycle), and derives the desired providers of the named nodes only.
func (c *cycle) observeOnly(ctx context.Context, only []string) ([]Desired, []string, bool) {
	t := time.Now()
	all, err := c.e.src.ListNodes(ctx, c.e.pol.Scope.Request())
	c.listed("nodes", len(all), t, err, all)
	if err != nil {
		c.fail(ErrListing, "", "list nodes: "+err.Error()+"; no writes this cycle")
		return nil, nil, false
	}
	nodes, unknown := selectNodes(all, only, c.e.pol.Scope)
	if len(unknown) > 0 {
		return nil, unknown, false
	}
	c.forgetProofs(nodes) // a node listed again is not gone
	t = time.Now()
	instances, err := c.e.src.ListInstances(ctx)
	c.listed("instances", len(instances), t, err, nil)
	if err != nil {
		c.fail(ErrListing, "", "list instances: "+err.Error()+"; no writes this cycle")
		return nil, nil, false
	}
	on := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		on[strings.ToLower(n.UUID)] = true
	}
	instances = slices.DeleteFunc(instances, func(in hostabi.Instance) bool { return !on[strings.ToLower(in.NodeUUID)] })
	c.r.Nodes, c.r.Instances = len(nodes), len(instances)
	desired, problems := DesiredState(nodes, instances, c.e.pol)
	c.takeDesired(desired, problems)
	return desired, nil, true
}

// selectNodes keeps the nodes in scope that only names, by uuid (any
// case) or name, and returns the names that matched none.
func selectNodes(all []hostabi.Node, only []string, scope Scope) ([]hostabi.Node, []string) {
	found := make([]bool, len(only))
	var out []hostabi.Node
	for _, n := range all {
		hit := false
		for i, s := range only {
			if strings.EqualFold(n.UUID, s) || n.Name != "" && n.Name == s {
				found[i], hit = found[i] || scope.Contains(n), true
			}
		}
		if hit && scope.Contains(n) {
			out = append(out, n)
		}
	}
	var unknown []string
	for i, s := range only {
		if !found[i] {
			unknown = append(unknown, s)
		}
	}
	return out, unknown
}

// settleNamedHolds is settleHolds for the named nodes: it places the
// holds of providers created now and releases those of named nodes that
// need none any more, after their inventory is written. Another node's
// hold is left as it is.
func (c *cycle) settleNamedHolds(ctx context.Context, desired []Desired, listed map[string]placement.Generation) {
	rep := c.nova()
	if rep == nil || rep.skip {
		return
	}
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	held := c.state.heldOrPeer()
	for _, d := range desired {
		switch {
		case d.Hold != "" && held[d.UUID] != d.Hold && listed[d.UUID] == "":
			c.placeOne(ctx, d, "", rep)
		case d.Hold == "" && held[d.UUID] != "":
			c.releaseOne(ctx, d.UUID, d.NodeName, rep)
		}
	}
	rep.Held = len(c.state.heldBook())
}
