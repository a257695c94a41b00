package ops

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pluginMetrics are the series about what runs: the build, the plugin
// and the plugin's HTTP requests (metrics.go has the cycle's).
type pluginMetrics struct {
	buildInfo  *prometheus.GaugeVec     // version, commit, goversion, wazero, abi
	pluginInfo *prometheus.GaugeVec     // name, version, abi
	pluginHTTP *prometheus.HistogramVec // service, outcome
}

func (m *Metrics) registerPlugin() {
	x := &m.plugin
	x.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_build_info",
		Help: "Always 1; the labels say which build runs."}, []string{"version", "commit", "goversion", "wazero", "abi"})
	x.pluginInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_plugin_info",
		Help: "Always 1 for the plugin in use; the labels say which."}, []string{"name", "version", "abi"})
	x.pluginHTTP = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rpengine_plugin_http_request_duration_seconds",
		Help:    "The plugin's HTTP requests to its services (until the response headers), by service and outcome.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"service", "outcome"})
	for _, c := range []prometheus.Collector{x.buildInfo, x.pluginInfo, x.pluginHTTP} {
		m.reg.MustRegister(c)
	}
}

// SetBuildInfo sets rpengine_build_info.
func (m *Metrics) SetBuildInfo(version, commit, goVersion, wazero, abi string) {
	m.plugin.buildInfo.Reset()
	m.plugin.buildInfo.WithLabelValues(version, commit, goVersion, wazero, abi).Set(1)
}

// SetPlugin sets rpengine_plugin_info to the plugin in use.
func (m *Metrics) SetPlugin(name, version, abi string) {
	m.plugin.pluginInfo.Reset()
	m.plugin.pluginInfo.WithLabelValues(name, cmpOr(version, "unknown"), abi).Set(1)
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
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
	return timedTransport{next: next, h: m.plugin.pluginHTTP, services: services, names: names, deps: &m.deps}
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
