package events

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the event path's series (docs/EVENTS.md lists them).
type Metrics struct {
	Received  prometheus.Counter // messages delivered by the bus
	Batches   prometheus.Counter // batches handed on
	Coalesced prometheus.Counter // messages merged into a node already in their batch
	Deferred  prometheus.Counter // nodes whose read waits for their cooldown
	Ignored   prometheus.Counter // messages about no node, or about nodes out of scope
	Failed    prometheus.Counter // messages the plugin could not read
	Fallbacks *prometheus.CounterVec
	Syncs     *prometheus.CounterVec // node syncs by outcome
	// Lag runs from a notification's timestamp to the Placement write it
	// caused, by the notification's kind (LagKinds bounds the values).
	Lag       *prometheus.HistogramVec
	Connected prometheus.Gauge
	Connects  prometheus.Counter
	// Probes counts the probes of recently changed nodes by outcome (ok,
	// failed, overflow); ProbeChanged the nodes they found changed.
	Probes       *prometheus.CounterVec
	ProbeChanged prometheus.Counter
	// SyncSize is how many distinct nodes each node sync asked for.
	SyncSize prometheus.Histogram
}

// NewMetrics registers the series with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "rpengine_events_" + name, Help: help})
	}
	m := &Metrics{
		Received:  c("received_total", "Notifications delivered by the bus."),
		Batches:   c("batches_total", "Coalesced batches of notifications handed to the engine."),
		Coalesced: c("coalesced_total", "Notifications about a node already in their batch (one read serves them all)."),
		Deferred:  c("deferred_total", "Nodes of a batch read less than events.node_cooldown ago: read once when it ends, for all that came meanwhile."),
		Ignored:   c("ignored_total", "Notifications about no node, or only about nodes this engine does not manage."),
		Failed:    c("failed_total", "Notifications the plugin could not read; each makes a full cycle."),
		Fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_events_fallbacks_total",
			Help: "Full cycles run early because events could not be trusted, by reason."}, []string{"reason"}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_node_syncs_total",
			Help: "Node syncs (event-driven partial reconciles) by outcome."}, []string{"outcome"}),
		Lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpengine_event_lag_seconds",
			Help:    "From a notification's timestamp to the end of the Placement write it caused, by the notification's kind.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 300}}, []string{"kind"}),
		Connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_events_connected",
			Help: "1 while the event source is connected to the bus."}),
		Connects: c("connects_total", "Connections made to the bus (the first included)."),
		Probes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_events_probes_total",
			Help: "Probes of the source's recently changed nodes, by outcome (ok, failed, overflow)."}, []string{"outcome"}),
		ProbeChanged: c("probe_changed_total", "Nodes a probe found changed since the previous probe (each synced)."),
		SyncSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rpengine_node_sync_nodes",
			Help:    "Distinct nodes each node sync asked the source for (a batch's size).",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}}),
	}
	if reg != nil {
		reg.MustRegister(m.Received, m.Batches, m.Coalesced, m.Deferred, m.Ignored, m.Failed, m.Fallbacks, m.Syncs, m.Lag, m.Connected, m.Connects, m.Probes, m.ProbeChanged, m.SyncSize)
	}
	return m
}

func (m *Metrics) connected(up bool) {
	if up {
		m.Connected.Set(1)
		m.Connects.Inc()
		return
	}
	m.Connected.Set(0)
}

// MaxLagKinds bounds the kind label's values: the kinds come from the bus
// through the plugin, and a hostile or noisy bus must not grow the series
// without end.
const MaxLagKinds = 32

// maxKindLength bounds one kind label value, in bytes.
const maxKindLength = 64

// LagKinds maps a notification's kind to its label value: the kind
// itself (cut to 64 bytes) for the first MaxLagKinds seen, "other" past them, "unknown"
// for none. Safe for concurrent use.
type LagKinds struct {
	mu   sync.Mutex
	seen map[string]bool
}

// Label is kind's label value.
func (k *LagKinds) Label(kind string) string {
	if kind == "" {
		return "unknown"
	}
	if len(kind) > maxKindLength {
		kind = kind[:maxKindLength]
	}
	kind = strings.ToValidUTF8(kind, "")
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	if !k.seen[kind] && len(k.seen) >= MaxLagKinds {
		return "other"
	}
	k.seen[kind] = true
	return kind
}
