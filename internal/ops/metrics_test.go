package ops_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// metric reads one series from the /metrics text, as Prometheus would.
func metric(t *testing.T, h http.Handler, series string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("series %s not exported", series)
	return 0
}

// Every metric moves as the script says.
func TestMetricsOverAScriptedRun(t *testing.T) {
	r := newRig(t, 10)
	h := r.ops.Handler()
	m := func(series string) float64 { return metric(t, h, series) }
	want := func(series string, v float64) {
		t.Helper()
		if got := m(series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	r.src.set(func(s *source) {
		s.nodes[0].Maintenance = true
		s.nodes[1].InstanceUUID = "11111111-1111-4111-8111-111111111111"
		s.nodes[2].ResourceClass = "" // quarantined
	})

	// 1. Cold start: nine created, one quarantined (an error: partial).
	rep := r.cycle()
	if rep.Created != 9 || rep.Quarantined != 1 {
		t.Fatalf("cycle 1: %+v", rep)
	}
	want(`rpengine_cycles_total{outcome="partial"}`, 1)
	want(`rpengine_cycles_total{outcome="ok"}`, 0)
	want(`rpengine_providers_changed_total{action="created"}`, 9)
	want(`rpengine_nodes{state="schedulable"}`, 7)
	want(`rpengine_nodes{state="maintenance"}`, 1)
	want(`rpengine_nodes{state="instance"}`, 1)
	want(`rpengine_nodes{state="quarantined"}`, 1)
	want(`rpengine_providers_quarantined`, 1)
	want(`rpengine_cycle_errors`, 1)
	want(`rpengine_last_success_timestamp_seconds`, 1060)
	want(`rpengine_last_cycle_timestamp_seconds`, 1060)
	want(`rpengine_cycle_duration_seconds_count`, 1)
	want(`rpengine_plugin_call_duration_seconds_count{call="list_nodes",outcome="ok"}`, 1)
	want(`rpengine_plugin_call_duration_seconds_count{call="list_instances",outcome="ok"}`, 1)
	want(`rpengine_placement_request_duration_seconds_count{method="POST",outcome="ok"}`, 9)
	if ready, _ := r.ops.Ready(); !ready {
		t.Error("not ready after a partial cycle")
	}

	// 2. The class fixed, one node into maintenance, one conflict met.
	r.src.set(func(s *source) { s.nodes[2].ResourceClass = "baremetal-gold"; s.nodes[3].Maintenance = true })
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/" + nodeUUID(3) + "/inventories",
		Conflict: true, Times: 1})
	rep = r.cycle()
	if rep.Created != 1 || rep.Updated != 1 || rep.Conflicts != 1 || len(rep.Errors) != 0 {
		t.Fatalf("cycle 2: %+v", rep)
	}
	want(`rpengine_cycles_total{outcome="ok"}`, 1)
	want(`rpengine_providers_changed_total{action="created"}`, 10)
	want(`rpengine_providers_changed_total{action="updated"}`, 1)
	want(`rpengine_conflicts_total`, 1)
	want(`rpengine_placement_request_duration_seconds_count{method="PUT",outcome="conflict"}`, 1)
	want(`rpengine_nodes{state="maintenance"}`, 2)
	want(`rpengine_nodes{state="quarantined"}`, 0)
	want(`rpengine_providers_quarantined`, 0)
	want(`rpengine_cycle_errors`, 0)
	want(`rpengine_last_success_timestamp_seconds`, 1120)

	// 3 and 4. A node deleted: proven twice, then its provider deleted.
	r.src.set(func(s *source) { s.gone[nodeUUID(9)] = true; s.nodes = s.nodes[:9] })
	r.cycle()
	want(`rpengine_providers_changed_total{action="deleted"}`, 0)
	rep = r.cycle()
	if rep.Deleted != 1 {
		t.Fatalf("cycle 4: %+v", rep)
	}
	want(`rpengine_providers_changed_total{action="deleted"}`, 1)
	want(`rpengine_plugin_call_duration_seconds_count{call="confirm_deleted",outcome="ok"}`, 2)
	want(`rpengine_placement_request_duration_seconds_count{method="DELETE",outcome="ok"}`, 1)

	// 5. The plugin fails: a failed cycle keeps the last node counts and
	// the last success time.
	r.src.set(func(s *source) { s.failNodes = errors.New("ironic answered 503") })
	rep = r.cycle()
	want(`rpengine_cycles_total{outcome="failed"}`, 1)
	want(`rpengine_plugin_call_duration_seconds_count{call="list_nodes",outcome="error"}`, 1)
	want(`rpengine_nodes{state="schedulable"}`, 6)
	want(`rpengine_last_success_timestamp_seconds`, 1240)
	want(`rpengine_last_cycle_timestamp_seconds`, 1300)
	want(`rpengine_cycle_errors`, 1)

	// 6. Placement fails the listing, every retry too: server errors, and
	// a failed cycle.
	r.src.set(func(s *source) { s.failNodes = nil })
	down := r.fake.Inject(placementfake.Fault{Method: "GET", Path: "/resource_providers", Status: 503})
	r.cycle()
	down.Remove()
	want(`rpengine_cycles_total{outcome="failed"}`, 2)
	want(`rpengine_placement_request_duration_seconds_count{method="GET",outcome="server_error"}`, placement.DefaultAttempts)
	want(`rpengine_cycle_duration_seconds_count`, 6)

	// Health: three intervals without success make the daemon unhealthy.
	if ok, why := r.ops.Healthy(); !ok {
		t.Errorf("unhealthy too early: %s", why)
	}
	r.clock.advance(2 * time.Minute)
	if ok, why := r.ops.Healthy(); ok || !strings.Contains(why, "no successful cycle for 4m0s") {
		t.Errorf("healthy after 4 minutes without success: %s", why)
	}
	r.cycle()
	if ok, why := r.ops.Healthy(); !ok {
		t.Errorf("still unhealthy after a good cycle: %s", why)
	}
	want(`rpengine_last_success_timestamp_seconds`, 1540)

	// Reloads count by result.
	r.ops.Reloaded(nil)
	r.ops.Reloaded(errors.New("bad"))
	want(`rpengine_config_reloads_total{result="ok"}`, 1)
	want(`rpengine_config_reloads_total{result="failed"}`, 1)
	if n := testutil.CollectAndCount(r.ops.Metrics.Registry(), "go_goroutines"); n != 1 {
		t.Errorf("Go runtime metrics missing")
	}
}

func TestProbes(t *testing.T) {
	r := newRig(t, 2)
	srv := httptest.NewServer(r.ops.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "no successful cycle yet") {
		t.Fatalf("readyz before a cycle: %d %s", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("healthz at start: %d", code)
	}
	r.cycle()
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz after a cycle: %d", code)
	}
	r.clock.advance(3*time.Minute + time.Second)
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, "server.unhealthy_after") {
		t.Fatalf("healthz after three intervals: %d %s", code, body)
	}
	if resp, _ := http.Post(srv.URL+"/metrics", "text/plain", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /metrics: %d", resp.StatusCode)
	}
}

// A first cycle that creates thousands of providers takes long: while it
// moves, the daemon is healthy; once it stops moving, it is not.
func TestHealthDuringAColdStart(t *testing.T) {
	r := newRig(t, 1)
	progress := r.ops.Progress(slog.New(slog.DiscardHandler), time.Hour)
	r.ops.CycleStarted()
	for i := range 10 {
		r.clock.advance(time.Minute)
		progress(i+1, 1000)
		if ok, why := r.ops.Healthy(); !ok {
			t.Fatalf("unhealthy %d minutes into a moving cold start: %s", i+1, why)
		}
	}
	r.clock.advance(4 * time.Minute)
	if ok, _ := r.ops.Healthy(); ok {
		t.Fatal("healthy while a cold start stands still")
	}
	if s := r.ops.Snapshot(); !s.Running || s.Done != 10 || s.Total != 1000 {
		t.Fatalf("progress on the page: %+v", s)
	}
}

// Progress speaks only in long cycles: every logEvery, and once at the end.
func TestProgressLogsOnlyLongCycles(t *testing.T) {
	r := newRig(t, 1)
	var buf strings.Builder
	progress := r.ops.Progress(slog.New(slog.NewTextHandler(&buf, nil)), 10*time.Second)
	r.ops.CycleStarted()
	for i := range 5 { // a quick cycle
		progress(i+1, 5)
	}
	if buf.Len() != 0 {
		t.Fatalf("a quick cycle logged progress:\n%s", buf.String())
	}
	r.ops.CycleStarted()
	for i := range 35 { // a cold start: one provider a second
		r.clock.advance(time.Second)
		progress(i+1, 35)
	}
	if n := strings.Count(buf.String(), "cycle progress"); n != 4 || !strings.Contains(buf.String(), "done=35") { // at 10, 20, 30 s and the end
		t.Fatalf("%d progress lines:\n%s", n, buf.String())
	}
}
