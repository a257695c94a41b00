package main

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// Node syncs in observe mode (docs/OBSERVE.md): a notification or the
// probe makes the engine read those nodes and plan their providers
// (engine.ObserveNodes): nothing is written, and the nodes' drift is
// updated at once, keeping when each drift that lasts began.

// syncNodes is the setup's node sync: a plan in observe mode, else the
// engine's node sync.
func (w *daemonSetup) syncNodes(ctx context.Context, src engine.NodeReader, uuids []string) engine.NodeSyncReport {
	if w.drift == nil {
		return w.eng.SyncNodes(ctx, src, uuids)
	}
	r := w.eng.ObserveNodes(ctx, src, uuids)
	drift := driftOf(r.Report, append([]string{ownerTrait(w.cfg)}, w.cfg.Provider.MarkerTraits...))
	w.drift.updateNodes(uuids, drift, time.Now())
	if len(drift) > 0 {
		w.log.Info("observe: drift of the nodes synced (nothing written)", "nodes", len(drift),
			"oldest", w.drift.lasting(5))
	}
	return r
}

// updateNodes takes a node sync's drift: the drifts of the nodes asked
// are replaced by drift (a lasting one keeps its start), the others kept
// as the last full cycle left them. A full cycle that read before the
// node sync and ends after it replaces the book again: the next
// notification or cycle brings the node back up to date.
func (b *driftBook) updateNodes(asked []string, drift map[string][]string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sync := map[string]bool{}
	for _, u := range asked {
		sync[strings.ToLower(u)] = true
	}
	next := map[string]time.Time{}
	for key, at := range b.since {
		if !sync[key[:strings.IndexByte(key, ' ')]] {
			next[key] = at
		}
	}
	b.since = b.carried(drift, next, now)
	b.publish(now)
}

// list is every drift, oldest first: the status page's table.
func (b *driftBook) list() []ops.ObservedDrift {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ops.ObservedDrift, 0, len(b.since))
	for key, at := range b.since {
		node, kind, _ := strings.Cut(key, " ")
		out = append(out, ops.ObservedDrift{Node: node, Kind: kind, Since: at})
	}
	slices.SortFunc(out, func(a, b ops.ObservedDrift) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// of is node's drifts, as "kind since TIME": explain's.
func (b *driftBook) of(node string) []string {
	var out []string
	for _, d := range b.list() {
		if d.Node == node {
			out = append(out, d.Kind+" since "+d.Since.UTC().Format(time.RFC3339))
		}
	}
	return out
}
