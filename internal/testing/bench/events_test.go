package bench

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// TestEventLagBench measures how long a change in Ironic takes to reach
// Placement: the event-driven engine ([events], full cycles every 10 min)
// beside the periodic engine at its default interval (60 s), both `engine
// run` with the Ironic plugin on the real Ironic 21.4 (emitting its
// notifications on Debian's RabbitMQ) and a real Placement each. A change
// is a resource_class PATCH on one of RPBENCH_EVENTS_NODES enrolled nodes;
// its lag runs from the PATCH's return until Placement holds the new
// class (polled). RPBENCH_EVENTS=1 runs it; RPBENCH_EVENTS_OUT receives
// the Markdown.
func TestEventLagBench(t *testing.T) {
	if os.Getenv("RPBENCH_EVENTS") != "1" {
		t.Skip("RPBENCH_EVENTS unset")
	}
	n := envInts(t, "RPBENCH_EVENTS_NODES", "1000")[0]
	changes := envInts(t, "RPBENCH_EVENTS_CHANGES", "100")[0]
	bus := rabbittest.Start(t)
	ironicURL := ironictest.StartRealNotifying(t, bus.URL)
	ic := ironictest.NewClient(t, ironicURL)
	uuids := make([]string, n)
	for i := range uuids {
		uuids[i] = ic.Create(t, ironictest.Spec{Name: fmt.Sprintf("lag-%04d", i), ResourceClass: "bench-a"})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| engine | nodes | changes | lag p50 s | lag p99 s | lag max s | Ironic requests per full cycle | per change |\n|---|---|---|---|---|---|---|---|\n")
	var rows [2]lagRun
	for i, events := range []bool{true, false} {
		rows[i] = runLag(t, ic, ironicURL, bus, uuids, changes, events, i)
	}
	rows[0].perCycle = rows[1].perCycle
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f | %.2f | %.2f | %.0f | %.2f |\n", r.name, n, changes,
			pct(r.lags, 50), pct(r.lags, 99), pct(r.lags, 100), r.perCycle, r.perChange)
	}
	b.WriteString("\nIronic requests an hour, events beside periodic (the probe's cost included): see \"Events at fleet scale\".\n")
	t.Log("\n" + b.String())
	if out := os.Getenv("RPBENCH_EVENTS_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type lagRun struct {
	name                string
	lags                []float64 // seconds
	perCycle, perChange float64   // Ironic requests
}

func runLag(t *testing.T, ic *ironictest.Client, ironicURL string, bus *rabbittest.Broker, uuids []string, changes int, events bool, round int) lagRun {
	placement := placementtest.StartReal(t)
	eng := startLagEngine(t, placement, ironicURL, bus, events, "", "")
	defer eng.stop()
	class := func(round, k int) string { return []string{"bench-a", "bench-b"}[(round+k)%2] }
	rc := func(c string) string { return "CUSTOM_" + strings.ToUpper(strings.ReplaceAll(c, "-", "_")) }
	waitFor(t, 10*time.Minute, "the first full cycle", func() bool { return eng.metric("rpengine_cycles_total") >= 1 })
	if events { // the connect's full cycle (the first batch says messages may have been missed)
		waitFor(t, 3*time.Minute, "the connect's full cycle", func() bool { return eng.metric("rpengine_cycles_total") >= 2 })
	}
	time.Sleep(2 * time.Second)
	before := eng.metric("rpengine_plugin_http_request_duration_seconds_count")
	cycles := eng.metric("rpengine_cycles_total")
	lags := make([]float64, changes)
	var wg sync.WaitGroup
	gap := 500 * time.Millisecond
	for k := range changes {
		u := uuids[(k*7919)%len(uuids)]
		want := class(round, 1)
		ic.SetResourceClass(t, u, want)
		at := time.Now()
		wg.Go(func() {
			poll := 50 * time.Millisecond
			if !events {
				poll = 2 * time.Second // spare Placement: the periodic engine's lag is tens of seconds
			}
			for !hasClass(placement, u, rc(want)) {
				time.Sleep(poll)
			}
			lags[k] = time.Since(at).Seconds()
		})
		time.Sleep(gap)
	}
	wg.Wait()
	r := lagRun{name: "periodic, engine.interval 60 s", lags: lags}
	if events {
		r.name = "events, full cycles every 10 min"
		if c := eng.metric("rpengine_cycles_total"); c != cycles {
			t.Logf("note: %v full cycles ran during the event run", c-cycles)
		}
		r.perChange = (eng.metric("rpengine_plugin_http_request_duration_seconds_count") - before) / float64(changes)
		t.Logf("event run: received %v, batches %v, coalesced %v, node syncs %v, fallbacks %v, engine lag histogram %v samples (sum %.2f s)",
			eng.metric("rpengine_events_received_total"), eng.metric("rpengine_events_batches_total"), eng.metric("rpengine_events_coalesced_total"),
			eng.metric("rpengine_node_syncs_total"), eng.metric("rpengine_events_fallbacks_total"),
			eng.metric("rpengine_event_lag_seconds_count"), eng.metric("rpengine_event_lag_seconds_sum"))
	}
	if !events { // the event-driven engine's full cycles are the same, 10 minutes apart
		r.perCycle = eng.perCycle(t)
	}
	return r
}

// lagEngine is one `engine run`.
type lagEngine struct {
	metrics string
	logPath string
	cmd     *exec.Cmd
	once    sync.Once
}

// startLagEngine starts `engine run`; pluginExtra lines go to its [plugin]
// table, eventsExtra lines to its [events] table.
func startLagEngine(t *testing.T, placement, ironicURL string, bus *rabbittest.Broker, events bool, pluginExtra, eventsExtra string) *lagEngine {
	dir := t.TempDir()
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("RPENGINE_ENGINE_BIN")
	if bin == "" {
		t.Skip("RPENGINE_ENGINE_BIN unset (make bench sets it)")
	}
	text := fmt.Sprintf("[engine]\nid = \"lag\"\ninterval = \"60s\"\nstate_file = \"none\"\n[placement]\nendpoint = %q\ntoken = \"admin\"\n"+
		"[plugin]\npath = %q\ncache_dir = %q\n%s[plugin.services]\nbaremetal = %q\n[server]\nlisten = \"127.0.0.1:%d\"\n",
		placement, plugintest.Build(t, "plugins/ironic"), plugintest.CacheDir(), pluginExtra, ironicURL, port)
	if events {
		if err := os.WriteFile(filepath.Join(dir, "pw"), []byte("guest"), 0o600); err != nil {
			t.Fatal(err)
		}
		text += fmt.Sprintf("[events]\ntransport_url = \"amqp://guest@127.0.0.1:%d/\"\npassword_file = \"pw\"\nfull_interval = \"10m\"\n%s", bus.Port, eventsExtra)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &lagEngine{metrics: "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"}
	e.logPath = filepath.Join(dir, "engine.log")
	log, _ := os.Create(e.logPath)
	e.cmd = exec.Command(bin, "run", "--config", cfg)
	e.cmd.Stdout, e.cmd.Stderr = log, log
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.stop(); log.Close() })
	return e
}

func (e *lagEngine) stop() {
	e.once.Do(func() { _ = e.cmd.Process.Kill(); _ = e.cmd.Wait() })
}

// perCycle is the Ironic requests of one idle full cycle: the count
// between two cycles' ends, read from /metrics.
func (e *lagEngine) perCycle(t *testing.T) float64 {
	c0 := e.metric("rpengine_cycles_total")
	waitFor(t, 3*time.Minute, "a full cycle", func() bool { return e.metric("rpengine_cycles_total") > c0 })
	r0, c1 := e.metric("rpengine_plugin_http_request_duration_seconds_count"), e.metric("rpengine_cycles_total")
	waitFor(t, 3*time.Minute, "another full cycle", func() bool { return e.metric("rpengine_cycles_total") > c1 })
	return e.metric("rpengine_plugin_http_request_duration_seconds_count") - r0
}

func (e *lagEngine) metric(prefix string) float64 { return e.metricWith(prefix, "") }

// metricWith sums the samples named prefix whose line holds label.
func (e *lagEngine) metricWith(prefix, label string) float64 {
	resp, err := http.Get(e.metrics)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, prefix); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) && strings.Contains(rest, label) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

func hasClass(placement, uuid, rc string) bool {
	req, _ := http.NewRequest("GET", placement+"/resource_providers/"+uuid+"/inventories", nil)
	req.Header.Set("X-Auth-Token", "admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return resp.StatusCode == 200 && strings.Contains(b.String(), `"`+rc+`"`)
}

func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); time.Since(start) < bound; time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %s", what, bound)
}

// pct is the p-th percentile (nearest rank) of xs.
func pct(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
