package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// NodeReader reads a few given nodes, then the instances on them, from
// the source (the plugin's read_nodes, hostabi.ExportReadNodes).
type NodeReader interface {
	ReadNodes(ctx context.Context, uuids []string) ([]hostabi.Node, error)
	ReadInstances(ctx context.Context, uuids []string) ([]hostabi.Instance, error)
}

// NodeSyncReport says what one node sync did. Report holds the counts,
// errors and outcomes, as a cycle's would for these nodes.
type NodeSyncReport struct {
	Report
	// Asked is the number of distinct nodes asked; Read those the source
	// returned; OutOfScope those among them this engine does not manage.
	Asked, Read, OutOfScope int
	// Missing lists the nodes the source did not return (deleted, or not
	// visible): a node sync never deletes, so a full cycle must decide.
	Missing []string
	// Written lists the nodes whose provider was created or updated.
	Written []string
	// Outrun says a full cycle that began after this node sync's read
	// wrote first: the node sync wrote nothing (engine/order.go).
	Outrun bool
	// FullCycle says why a full cycle should follow now ("" if none).
	FullCycle string
	End       time.Time
}

// SyncNodes reconciles only the given nodes, as a cycle would: it reads
// them from the source, then the instances on them, and writes their
// providers with the cycle's steps (steps.go: the ownership record first,
// in the file and the shared record, then the quarantine and syncAll:
// generations, retries, the name budget). It never deletes and lists
// nothing else: a node the source did not return, or anything it cannot
// be sure of, is left to a full cycle, which FullCycle then asks for. A
// node is always re-read, so what made the engine ask about it (a
// notification) is only a hint. It skips what judges the whole scope: the
// round (proofs count full cycles only), the orphans, the holds and the
// reaping. Like Cycle, it must not run concurrently with a cycle.
func (e *Engine) SyncNodes(ctx context.Context, src NodeReader, uuids []string) (r NodeSyncReport) {
	c := e.newCycle()
	uuids = distinctUUIDs(uuids)
	r.Asked = len(uuids)
	defer func() { c.finishNodeSync(&r); c.release() }()
	if e.pol.Nova.Enabled {
		r.FullCycle = "beside nova the holds are kept by full cycles"
		return r
	}
	if !c.negotiated(ctx) {
		r.FullCycle = "Placement refused the recorded microversion"
		return r
	}
	c.sweep(ctx, nodeRun(src, uuids, &r))
	return r
}

// nodeRun is the selection of a cycle's steps for a node sync: the nodes
// read from src, the providers' generations from the cache. A node of
// ours the source did not return is reserved at once (goneNow).
func nodeRun(src NodeReader, uuids []string, r *NodeSyncReport) run {
	return run{
		observe: func(ctx context.Context, c *cycle) (listedNodes, []Desired, bool) {
			nodes, instances, ok := c.readNodes(ctx, src, uuids, r)
			if !ok {
				return listedNodes{}, nil, false
			}
			desired, problems := DesiredState(nodes, instances, c.e.pol)
			c.takeDesired(desired, problems)
			return listedNodes{}, desired, true
		},
		providers: func(_ context.Context, c *cycle, desired []Desired) (map[string]placement.Generation, bool) {
			listed := c.cachedGenerations(desired)
			for _, u := range c.ours(r.Missing) {
				k, _ := c.state.get(u)
				listed[u] = k.Generation
			}
			return listed, true
		},
		gone: func(ctx context.Context, c *cycle, listed map[string]placement.Generation) {
			c.goneNow(ctx, c.ours(r.Missing), listed)
		},
	}
}

// ours keeps the uuids whose provider the cache says is this engine's.
func (c *cycle) ours(uuids []string) []string {
	var out []string
	for _, u := range uuids {
		if k, ok := c.state.get(u); ok && k.Generation != "" && !k.Pending && slices.Contains(k.Observed.Traits, c.e.pol.OwnerTrait) {
			out = append(out, u)
		}
	}
	return out
}

// goneNow fully reserves the providers of nodes of ours the source did
// not return (deleted, or no longer visible): the doubt of a first proof,
// at once rather than at the next full cycle. Only a full cycle's proofs
// delete; the node's next sync, once the source returns it, releases it.
func (c *cycle) goneNow(ctx context.Context, gone []string, listed map[string]placement.Generation) {
	ds := make([]doubtful, 0, len(gone))
	for _, u := range gone {
		ds = append(ds, doubtful{u, baremetal.ReservedPendingDeletion, listed[u], ""})
	}
	reserved := c.reserveDoubts(ctx, ds)
	for _, u := range gone {
		if reserved[u] {
			c.outcome(Outcome{Node: u, Kind: KindPendingDeletion, Reserved: string(baremetal.ReservedPendingDeletion),
				Message: "not returned by the source (deleted?): fully reserved until a full cycle's proofs decide"}, Observed{})
			c.r.Reserved[string(baremetal.ReservedPendingDeletion)]++
		}
	}
}

// readNodes reads the nodes, then the instances on those in scope: the
// order of a cycle, so a consumer placed during the node read is seen.
func (c *cycle) readNodes(ctx context.Context, src NodeReader, uuids []string, r *NodeSyncReport) ([]hostabi.Node, []hostabi.Instance, bool) {
	t := time.Now()
	nodes, err := src.ReadNodes(ctx, uuids)
	c.r.PluginMS += time.Since(t).Milliseconds()
	if err != nil {
		c.fail(ErrPlugin, "", fmt.Sprintf("read nodes: %v; no writes", err))
		return nil, nil, false
	}
	r.Read = len(nodes)
	got := map[string]bool{}
	var in []hostabi.Node
	for _, n := range nodes {
		got[strings.ToLower(n.UUID)] = true
		if c.e.pol.Scope.Contains(n) {
			in = append(in, n)
		}
	}
	r.OutOfScope = len(nodes) - len(in)
	for _, u := range uuids {
		if !got[u] {
			r.Missing = append(r.Missing, u)
		}
	}
	c.forgetProofs(in) // a node read again is not gone
	if len(in) == 0 {
		return nil, nil, len(c.ours(r.Missing)) > 0 // only reserving is left to do
	}
	ask := make([]string, len(in))
	for i, n := range in {
		ask[i] = strings.ToLower(n.UUID)
	}
	t = time.Now()
	instances, err := src.ReadInstances(ctx, ask)
	c.r.PluginMS += time.Since(t).Milliseconds()
	if err != nil {
		c.fail(ErrPlugin, "", fmt.Sprintf("read instances: %v; no writes", err))
		return nil, nil, false
	}
	c.r.Nodes, c.r.Instances = len(in), len(instances)
	return in, instances, true
}

// cachedGenerations stands in for a cycle's listing of our providers: the
// generation the engine last saw of each, which the writes send back. A
// stale one costs a conflict and a re-read, as in a cycle; a provider not
// in the cache is created, or adopted under the cycle's rules.
func (c *cycle) cachedGenerations(desired []Desired) map[string]placement.Generation {
	out := make(map[string]placement.Generation, len(desired))
	for _, d := range desired {
		if k, ok := c.state.get(d.UUID); ok && k.Generation != "" && !k.Pending {
			out[d.UUID] = k.Generation
		}
	}
	return out
}

// finishNodeSync completes the report and tells the observers.
func (c *cycle) finishNodeSync(r *NodeSyncReport) {
	c.mu.Lock()
	r.Report = c.r
	c.mu.Unlock()
	r.capErrors()
	r.PlacementRequests = c.e.pc.TakeRequests()
	r.Outcomes = c.results.take()
	for _, o := range r.Outcomes {
		if !c.dry && (o.Kind == KindCreated || o.Kind == KindUpdated) { // observe mode: planned only
			r.Written = append(r.Written, o.Node)
		}
	}
	r.End, r.Outrun = time.Now(), c.outran
	r.DurationMS = r.End.Sub(c.start).Milliseconds()
	switch {
	case r.FullCycle != "":
	case len(r.Missing) > 0:
		r.FullCycle = fmt.Sprintf("%d node(s) not returned by the source (deleted?)", len(r.Missing))
	case len(r.Errors) > 0:
		r.FullCycle = fmt.Sprintf("%d error(s) in the node sync", len(r.Errors))
	}
	c.e.emit(NodesSynced{Report: *r})
}

func distinctUUIDs(uuids []string) []string {
	out := make([]string, 0, len(uuids))
	for _, u := range uuids {
		out = append(out, strings.ToLower(u))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Scope is what the engine manages now (SetScope may change it).
func (e *Engine) Scope() Scope { return e.pol.Scope }
