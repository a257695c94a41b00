package ops

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rpengine/rpengine/engine"
)

// moreMetrics are the series about the build, the plugin and the
// per-node outcomes (metrics.go has the cycle's).
type moreMetrics struct {
	buildInfo   *prometheus.GaugeVec     // version, commit, goversion, wazero, abi
	pluginInfo  *prometheus.GaugeVec     // name, version, abi
	pluginHTTP  *prometheus.HistogramVec // service, outcome
	quarantined *prometheus.GaugeVec     // reason
	blocked     *prometheus.GaugeVec     // reason
	pending     prometheus.Gauge
	doubt       *prometheus.GaugeVec // reason: quarantined, pending_deletion
}

func (m *Metrics) registerMore() {
	x := &m.more
	x.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_build_info",
		Help: "Always 1; the labels say which build runs."}, []string{"version", "commit", "goversion", "wazero", "abi"})
	x.pluginInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_plugin_info",
		Help: "Always 1 for the plugin in use; the labels say which."}, []string{"name", "version", "abi"})
	x.pluginHTTP = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpengine_plugin_http_request_duration_seconds",
		Help:    "The plugin's HTTP requests to its services (until the response headers), by service and outcome.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"service", "outcome"})
	x.quarantined = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_nodes_quarantined",
		Help: "Nodes quarantined at the last cycle, by reason code (docs/REPORT.md)."}, []string{"reason"})
	x.blocked = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_deletions_blocked",
		Help: "Providers of nodes proven deleted that the last cycle did not delete, by reason."}, []string{"reason"})
	x.pending = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_deletions_pending",
		Help: "Providers of nodes proven deleted, waiting for their next proof."})
	x.doubt = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_providers_reserved_on_doubt",
		Help: "Providers the last cycle held fully reserved on doubt: of a quarantined node, of a node proven gone once."}, []string{"reason"})
	for _, r := range doubtReasons {
		x.doubt.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{x.buildInfo, x.pluginInfo, x.pluginHTTP, x.quarantined, x.blocked, x.pending, x.doubt} {
		m.reg.MustRegister(c)
	}
	for _, r := range quarantineReasons {
		x.quarantined.WithLabelValues(r)
	}
	for _, r := range blockedReasons {
		x.blocked.WithLabelValues(r)
	}
}

// The label values: fixed sets, so the series exist from the start.
var (
	quarantineReasons = []string{engine.CodeDuplicate, engine.CodeBadUUID, engine.CodeClassAndResources,
		engine.CodeNoClass, engine.CodeBadClass, engine.CodeBadResources, engine.CodeFieldTooLong, engine.CodeTooManyEntries,
		engine.CodeBadUTF8, engine.CodeBadValue}
	blockedReasons = []string{engine.ReasonAllocations, engine.ReasonRefused, engine.ReasonDeleteLimit}
	doubtReasons   = []string{"quarantined", "pending_deletion"}
)

// SetBuildInfo sets rpengine_build_info.
func (m *Metrics) SetBuildInfo(version, commit, goVersion, wazero, abi string) {
	m.more.buildInfo.Reset()
	m.more.buildInfo.WithLabelValues(version, commit, goVersion, wazero, abi).Set(1)
}

// SetPlugin sets rpengine_plugin_info to the plugin in use.
func (m *Metrics) SetPlugin(name, version, abi string) {
	m.more.pluginInfo.Reset()
	m.more.pluginInfo.WithLabelValues(name, cmpOr(version, "unknown"), abi).Set(1)
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// outcomes sets the per-reason gauges from a cycle's outcomes.
func (m *Metrics) outcomes(os []engine.Outcome) {
	q, b, pending, doubt := map[string]int{}, map[string]int{}, 0, map[string]int{}
	for _, o := range os {
		if slices.Contains(doubtReasons, o.Reserved) {
			doubt[o.Reserved]++
		}
		switch o.Kind {
		case engine.KindQuarantined:
			q[o.Reason]++
		case engine.KindBlocked:
			b[o.Reason]++
		case engine.KindPendingDeletion:
			pending++
		}
	}
	set := func(v *prometheus.GaugeVec, known []string, n map[string]int) {
		for _, r := range known {
			v.WithLabelValues(r).Set(float64(n[r]))
		}
		for r, c := range n {
			if !slices.Contains(known, r) && r != "" {
				v.WithLabelValues(r).Set(float64(c))
			}
		}
	}
	set(m.more.quarantined, quarantineReasons, q)
	set(m.more.blocked, blockedReasons, b)
	set(m.more.doubt, doubtReasons, doubt)
	m.more.pending.Set(float64(pending))
}

// PluginHTTP wraps the transport of the plugin's HTTP requests so that
// each is timed by service (the longest endpoint the URL starts with)
// and outcome. services maps the names granted to their endpoints.
func (m *Metrics) PluginHTTP(services map[string]string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	names := make([]string, 0, len(services))
	for n := range services {
		names = append(names, n)
	}
	// Longest endpoint first, so "http://h/baremetal/v1" wins over "http://h/".
	slices.SortFunc(names, func(a, b string) int {
		if d := len(services[b]) - len(services[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return timedTransport{next: next, h: m.more.pluginHTTP, services: services, names: names, deps: &m.deps}
}

type timedTransport struct {
	next     http.RoundTripper
	h        *prometheus.HistogramVec
	services map[string]string
	names    []string
	deps     *deps
}

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	service := t.service(req.URL.String())
	t.h.WithLabelValues(service, httpOutcome(status)).Observe(time.Since(start).Seconds())
	switch {
	case req.Context().Err() != nil: // given up: proves nothing
	case err != nil:
		t.deps.observe(service, err, time.Now())
	case status >= 500:
		t.deps.observe(service, fmt.Errorf("%s %s answered %s", req.Method, req.URL.Path, resp.Status), time.Now())
	default:
		t.deps.observe(service, nil, time.Now())
	}
	return resp, err
}

func (t timedTransport) service(u string) string {
	for _, n := range t.names {
		if strings.HasPrefix(u, strings.TrimSuffix(t.services[n], "/")) {
			return n
		}
	}
	return "other"
}

// PluginHTTPRequests counts the plugin's requests to service by outcome.
func (m *Metrics) PluginHTTPRequests(service, outcome string) uint64 {
	return sampleCount(m.more.pluginHTTP.WithLabelValues(service, outcome))
}
