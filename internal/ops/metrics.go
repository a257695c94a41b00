package ops

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/baremetal"
)

// Metrics are the engine's Prometheus series. Names and labels are listed
// in docs/OPERATIONS.md; label values come from small fixed sets.
type Metrics struct {
	reg  *prometheus.Registry
	deps deps // the outside services failing now (deps.go)

	cycleSeconds  prometheus.Histogram
	cycles        *prometheus.CounterVec // outcome
	lastCycle     prometheus.Gauge
	lastSuccess   prometheus.Gauge
	nodes         *prometheus.GaugeVec // state
	instances     prometheus.Gauge
	changed       *prometheus.CounterVec // action
	quarantined   prometheus.Gauge
	cycleErrors   prometheus.Gauge
	conflicts     prometheus.Counter
	placementSecs *prometheus.HistogramVec // method, outcome
	pluginSecs    *prometheus.HistogramVec // call, outcome
	reloads       *prometheus.CounterVec   // result
	foreign       prometheus.Counter       // rewrites of our values by another writer
	holds         prometheus.Gauge         // beside nova: hold allocations in place
	plugin        pluginMetrics            // plugin_metrics.go
	byReason      nodeMetrics              // node_metrics.go
	auth          authMetrics

	capacity *prometheus.GaugeVec // nodes by class, state and zone (capacity.go)
	pauses   pauseMetrics         // pause.go
}

// NodeStates are the values of the state label of rpengine_nodes: every
// ReservedReason of the reservation matrix (baremetal.Reasons), with ""
// named "schedulable".
var NodeStates = func() []string {
	out := make([]string, len(baremetal.Reasons))
	for i, r := range baremetal.Reasons {
		out[i] = r.State()
	}
	return out
}()

// NewMetrics registers the engine's series, Go's and the process's.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}
	// Cycle buckets span a quiet cycle (one request) to a 10-minute cold start.
	m.cycleSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rpengine_cycle_duration_seconds",
		Help: "Duration of reconcile cycles.", Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}})
	m.cycles = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_cycles_total",
		Help: "Cycles by outcome: ok (no error), partial (errors, some providers synced), failed."}, []string{"outcome"})
	m.lastCycle = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_last_cycle_timestamp_seconds",
		Help: "Unix time the last cycle ended."})
	m.lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_last_success_timestamp_seconds",
		Help: "Unix time the last ok or partial cycle ended."})
	m.nodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_nodes",
		Help: "Nodes in scope at the last cycle, by state: schedulable or the reservation reason."}, []string{"state"})
	m.instances = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_instances",
		Help: "Instances the plugin listed at the last cycle."})
	m.changed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_providers_changed_total",
		Help: "Providers created, updated or deleted."}, []string{"action"})
	m.quarantined = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_providers_quarantined",
		Help: "Nodes quarantined (not written) at the last cycle."})
	m.cycleErrors = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_cycle_errors",
		Help: "Errors reported by the last cycle."})
	m.conflicts = prometheus.NewCounter(prometheus.CounterOpts{Name: "rpengine_conflicts_total",
		Help: "Generation conflicts (409 concurrent_update) met and retried."})
	m.placementSecs = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpengine_placement_request_duration_seconds",
		Help: "Placement requests by method and outcome.", Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}},
		[]string{"method", "outcome"})
	m.pluginSecs = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpengine_plugin_call_duration_seconds",
		Help: "Calls into the inventory plugin by call and outcome.", Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}},
		[]string{"call", "outcome"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rpengine_config_reloads_total",
		Help: "SIGHUP reloads by result."}, []string{"result"})
	m.foreign = prometheus.NewCounter(prometheus.CounterOpts{Name: "rpengine_foreign_rewrites_total",
		Help: "Providers whose values another writer (e.g. nova-compute) changed and the engine wrote back: a fight."})
	m.holds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_nova_holds",
		Help: "Beside nova-compute: hold allocations keeping nodes the engine reserves off the scheduler."})
	for _, c := range []prometheus.Collector{m.cycleSeconds, m.cycles, m.lastCycle, m.lastSuccess, m.nodes, m.instances,
		m.changed, m.quarantined, m.cycleErrors, m.conflicts, m.placementSecs, m.pluginSecs, m.reloads, m.foreign, m.holds} {
		f(c)
	}
	m.registerPlugin()
	m.registerNodes()
	m.registerCapacity()
	m.registerAuth()
	m.registerPauses()
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Zeroes exist from the start, so rate() and alerts see them.
	for _, o := range []Outcome{OK, Partial, Failed} {
		m.cycles.WithLabelValues(string(o))
	}
	for _, a := range []string{"created", "updated", "deleted"} {
		m.changed.WithLabelValues(a)
	}
	for _, r := range []string{"ok", "failed"} {
		m.reloads.WithLabelValues(r)
	}
	return m
}

// Registry is where the series live, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the series in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// cycle records one finished cycle.
func (m *Metrics) cycle(r engine.Report, o Outcome, end time.Time) {
	m.cycleSeconds.Observe(float64(r.DurationMS) / 1000)
	m.cycles.WithLabelValues(string(o)).Inc()
	m.lastCycle.Set(unix(end))
	if o != Failed {
		m.lastSuccess.Set(unix(end))
	}
	m.changed.WithLabelValues("created").Add(float64(r.Created))
	m.changed.WithLabelValues("updated").Add(float64(r.Updated))
	m.changed.WithLabelValues("deleted").Add(float64(r.Deleted))
	m.conflicts.Add(float64(r.Conflicts))
	m.foreign.Add(float64(r.ForeignRewrites))
	m.pauses.set(r)
	if r.Nova != nil {
		m.holds.Set(float64(r.Nova.Held))
	}
	m.cycleErrors.Set(float64(len(r.Errors)))
	if o == Failed && r.Nodes == 0 {
		return // the listing failed: keep the last known node counts
	}
	m.outcomes(r.Outcomes)
	m.quarantined.Set(float64(r.Quarantined))
	m.instances.Set(float64(r.Instances))
	for _, s := range NodeStates {
		m.nodes.WithLabelValues(s).Set(0)
	}
	for reason, n := range r.Reserved {
		m.nodes.WithLabelValues(stateName(reason)).Set(float64(n))
	}
	// Quarantined nodes are not in Reserved: they have no desired provider.
	m.nodes.WithLabelValues("quarantined").Set(float64(r.Quarantined))
}

// ObservePlacement is placement.Config.Observe.
func (m *Metrics) ObservePlacement(method string, status int, d time.Duration) {
	m.placementSecs.WithLabelValues(method, httpOutcome(status)).Observe(d.Seconds())
}

// ObservePlugin records one call into the plugin.
func (m *Metrics) ObservePlugin(call, outcome string, d time.Duration) {
	m.pluginSecs.WithLabelValues(call, outcome).Observe(d.Seconds())
}

// Reloaded counts a SIGHUP reload.
func (m *Metrics) Reloaded(ok bool) {
	if ok {
		m.reloads.WithLabelValues("ok").Inc()
	} else {
		m.reloads.WithLabelValues("failed").Inc()
	}
}

// httpOutcome folds a status into few values: a label per status code
// would multiply series for no insight.
func httpOutcome(status int) string {
	switch {
	case status == 0:
		return "transport_error"
	case status < 400:
		return "ok"
	case status == 401 || status == 403:
		return "denied"
	case status == 404:
		return "not_found"
	case status == 409:
		return "conflict"
	case status < 500:
		return "client_error"
	}
	return "server_error"
}

func stateName(reason string) string {
	if reason == string(baremetal.Schedulable) {
		return "schedulable"
	}
	return reason
}

func unix(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// PluginCalls counts the calls of one name and outcome so far.
func (m *Metrics) PluginCalls(call, outcome string) uint64 {
	return sampleCount(m.pluginSecs.WithLabelValues(call, outcome))
}

// Reloads is the counter of reloads with result "ok" or "failed".
func (m *Metrics) Reloads(result string) prometheus.Counter { return m.reloads.WithLabelValues(result) }

func sampleCount(o prometheus.Observer) uint64 {
	var d dto.Metric
	if err := o.(prometheus.Metric).Write(&d); err != nil {
		return 0
	}
	return d.GetHistogram().GetSampleCount()
}
