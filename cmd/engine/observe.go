package main

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
)

// Observe mode (engine.mode = "observe", docs/OBSERVE.md): each cycle is
// a plan — Placement read, never written, not even the owner marker or a
// name — and what the plan would write is the drift, by node and kind,
// with how long each has lasted.

// driftKinds lists the kinds observe mode reports (audit's, audit.go),
// so each series exists from the start.
var driftKinds = []string{driftNoProvider, driftNoNode, driftInventory, driftReserved, driftTraits, driftAggregates}

// driftOf is each node's drift in an observe plan's report. The engine's
// own marks (ignore: its owner marker and marker_traits), which a run
// adds to a provider it adopts from nova-compute, are not drift: they say
// who writes, not what the scheduler sees.
func driftOf(r engine.Report, ignore []string) map[string][]string {
	out := map[string][]string{}
	add := func(node, kind string) {
		for _, k := range out[node] {
			if k == kind {
				return
			}
		}
		out[node] = append(out[node], kind)
	}
	for _, o := range r.Outcomes {
		if o.Kind == engine.KindDeleted || o.Kind == engine.KindPendingDeletion ||
			o.Kind == engine.KindKept && o.Reason == engine.ReasonUnowned {
			add(o.Node, driftNoNode)
		}
		if slices.ContainsFunc(o.Changes, func(c engine.Change) bool { return c.Field == "provider" }) {
			add(o.Node, driftNoProvider) // what it would be created with is not drift of its own
			continue
		}
		for _, c := range o.Changes {
			if !onlyAdds(c, ignore) {
				add(o.Node, observedKind(c))
			}
		}
	}
	return out
}

// observedKind is a plan change's drift kind: audit's, and a provider
// to create is one missing.
func observedKind(c engine.Change) string {
	if c.Field == "provider" {
		return driftNoProvider
	}
	return changeKind(c)
}

// driftBook keeps since when each (node, kind) drift is seen, and its
// series.
type driftBook struct {
	mu     sync.Mutex
	since  map[string]time.Time // node + " " + kind
	count  *prometheus.GaugeVec
	oldest prometheus.Gauge
}

var (
	driftBooksMu sync.Mutex
	driftBooks   = map[*ops.Ops]*driftBook{} // registered once per registry
)

func driftBookFor(o *ops.Ops) *driftBook {
	driftBooksMu.Lock()
	defer driftBooksMu.Unlock()
	if b, ok := driftBooks[o]; ok {
		return b
	}
	b := &driftBook{since: map[string]time.Time{},
		count: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_drift_nodes",
			Help: "Observe mode: nodes whose provider differs from what the rules would write, by kind."}, []string{"kind"}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_drift_oldest_seconds",
			Help: "Observe mode: how long the oldest drift still seen has lasted."})}
	o.Metrics.Registry().MustRegister(b.count, b.oldest)
	driftBooks[o] = b
	return b
}

// update takes a cycle's drift: new drifts start now, gone ones are
// forgotten.
func (b *driftBook) update(drift map[string][]string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.since = b.carried(drift, map[string]time.Time{}, now)
	b.publish(now)
}

// carried adds to into each (node, kind) of drift, since when it is
// seen: its start if the book has it, else now.
func (b *driftBook) carried(drift map[string][]string, into map[string]time.Time, now time.Time) map[string]time.Time {
	for node, kinds := range drift {
		for _, k := range kinds {
			key := node + " " + k
			at, ok := b.since[key]
			if !ok {
				at = now
			}
			into[key] = at
		}
	}
	return into
}

// publish sets the series from the book.
func (b *driftBook) publish(now time.Time) {
	counts := map[string]int{}
	var oldest time.Duration
	for key, at := range b.since {
		counts[key[strings.IndexByte(key, ' ')+1:]]++
		oldest = max(oldest, now.Sub(at))
	}
	for _, k := range driftKinds {
		b.count.WithLabelValues(k).Set(float64(counts[k]))
	}
	b.oldest.Set(oldest.Seconds())
}

// lasting lists the drifts as "node kind since", oldest first, at most n.
func (b *driftBook) lasting(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.since))
	for k := range b.since {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return b.since[keys[i]].Before(b.since[keys[j]]) })
	out := make([]string, 0, min(n, len(keys)))
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, k+" since "+b.since[k].UTC().Format(time.RFC3339))
	}
	return out
}

// observeCycle is a cycle in observe mode: the engine's plan, whose
// writes are the drift; the log names the oldest drifts.
func (w *daemonSetup) observeCycle(ctx context.Context) engine.Report {
	r := w.eng.Observe(ctx)
	drift := driftOf(r, append([]string{ownerTrait(w.cfg)}, w.cfg.Provider.MarkerTraits...))
	// Nothing was written: the counts of writes stay zero, so the write
	// metrics and the log do not count what was only planned.
	r.Created, r.Updated, r.Deleted = 0, 0, 0
	w.drift.update(drift, time.Now())
	if len(drift) > 0 {
		w.log.Info("observe: drift between Placement and the rules (nothing written)", "nodes", len(drift),
			"oldest", w.drift.lasting(5))
	}
	return r
}

// loadRunConfig is loadConfig for the daemon: run --observe (observe)
// puts it in observe mode whatever engine.mode says, so a reload of a
// file saying "run" cannot start writing.
func loadRunConfig(path string, observe bool) (*config.Config, error) {
	cfg, err := loadConfig(path)
	if err == nil && observe {
		cfg.Engine.Mode = "observe"
	}
	return cfg, err
}
