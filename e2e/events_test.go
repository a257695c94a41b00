package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// eventRig is `engine run` with [events] against the real Ironic 21.4
// emitting versioned notifications on Debian's RabbitMQ, and the real
// Placement. Full cycles come every 10 minutes while the bus is up
// (events.full_interval), every 3 s (engine.interval) while it is down.
type eventRig struct {
	t                  *testing.T
	bus                *rabbittest.Broker
	ironic             *ironictest.Client
	ironicURL          string
	placement, metrics string
	id, cfg, logPath   string
	cmd                *exec.Cmd
	exited             chan struct{}
}

// eventRigs numbers the rigs of this process.
var eventRigs atomic.Int32

// newEventRig writes the config; extra lines go to its [events] table.
func newEventRig(t *testing.T, extra ...string) *eventRig {
	return newEventRigVia(t, nil, extra...)
}

// newEventRigVia is newEventRig with the plugin reaching Ironic through
// via(Ironic's URL) (nil: directly), e.g. a slow proxy.
func newEventRigVia(t *testing.T, via func(string) string, extra ...string) *eventRig {
	r := &eventRig{t: t, bus: rabbittest.Start(t)}
	r.ironicURL = ironictest.StartRealNotifying(t, r.bus.URL)
	ironicURL := r.ironicURL
	if via != nil {
		ironicURL = via(ironicURL)
	}
	r.ironic = ironictest.NewClient(t, ironicURL)
	r.placement = placementtest.Shared(t)
	// Each rig its own engine id: rigs share the one Placement, and an
	// engine would take a former rig's providers, whose nodes this Ironic
	// lacks, for deleted ones.
	r.writeConfig(fmt.Sprintf("ev%x-%d", os.Getpid(), eventRigs.Add(1)), ironicURL, extra...)
	return r
}

// writeConfig writes engine id's config, its plugin reaching Ironic at
// ironicURL; extra lines go to its [events] table (or start tables of
// their own).
func (r *eventRig) writeConfig(id, ironicURL string, extra ...string) {
	r.id = id
	port, err := testenv.FreePort()
	if err != nil {
		r.t.Fatal(err)
	}
	r.metrics = "http://127.0.0.1:" + strconv.Itoa(port)
	dir := r.t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rabbit.password"), []byte("guest\n"), 0o600); err != nil {
		r.t.Fatal(err)
	}
	text := fmt.Sprintf(`[engine]
id = %q
interval = "3s"
state_file = "state.json"
delete_grace = "0s"

[provider]
marker_traits = ["COMPUTE_NODE"]

[placement]
endpoint = %q
token = "admin"

[plugin]
path = %q
timeout = "30s"
cache_dir = %q

[plugin.services]
baremetal = %q

[server]
listen = "127.0.0.1:%d"

[events]
transport_url = "rabbit://guest@127.0.0.1:%d/"
password_file = "rabbit.password"
full_interval = "10m"
`, r.id, r.placement, plugintest.Build(r.t, "plugins/ironic"), plugintest.CacheDir(), ironicURL, port, r.bus.Port) +
		strings.Join(extra, "\n")
	r.cfg = filepath.Join(dir, "config.toml")
	r.logPath = filepath.Join(dir, "engine.log")
	if err := os.WriteFile(r.cfg, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *eventRig) start() { r.cmd, r.exited = startRun(r.t, r.cfg, r.logPath) }

// startRun starts `engine run --config cfg`, its output in logPath, and
// returns it and a channel closed when it exits. At the test's end it is
// stopped (SIGTERM, then SIGKILL after 15 s) and, if the test failed,
// its log's tail goes to the test's output.
func startRun(t *testing.T, cfg, logPath string) (*exec.Cmd, chan struct{}) {
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(engineBin(t), "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("engine log (tail):\n%s", tailString(string(b), 8000))
		}
	})
	return cmd, exited
}

// metric sums the samples of a series whose line starts with prefix.
func (r *eventRig) metric(prefix string) float64 { return scrapeMetric(r.metrics+"/metrics", prefix) }

// scrapeMetric sums the samples of the series named prefix at url (-1
// when it does not answer).
func scrapeMetric(url, prefix string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix) && (len(line) > len(prefix) && (line[len(prefix)] == ' ' || line[len(prefix)] == '{')) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

func (r *eventRig) cycles() float64 { return r.metric("rpengine_cycles_total") }

// within polls cond until it holds, failing after bound; it returns how
// long that took (a figure for the log, not an assertion of speed).
func (r *eventRig) within(bound time.Duration, what string, cond func() bool) time.Duration {
	r.t.Helper()
	return within(r.t, bound, what, cond)
}

// moreCycles waits, at most bound, until the series (of cycles) at the
// metrics URL has grown by n; a daemon not answering yet counts 0.
func moreCycles(t *testing.T, metricsURL, series string, n int, bound time.Duration) {
	t.Helper()
	count := func() float64 { return scrapeMetric(metricsURL, series) }
	start := max(count(), 0)
	within(t, bound, fmt.Sprintf("%d more cycles at %s", n, metricsURL), func() bool { return count() >= start+float64(n) })
}

// within polls cond every 100 ms until it holds, failing t after bound;
// it returns how long that took.
func within(t *testing.T, bound time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < bound {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, bound)
	return 0
}

// reserved is the node's reserved count in Placement, -1 without provider.
func (r *eventRig) reserved(uuid string) int64 { return reservedIn(r.t, r.placement, uuid) }

// reservedIn is the reserved count of provider uuid's (first) inventory
// at the Placement base: -1 without provider, -2 without inventory.
func reservedIn(t *testing.T, base, uuid string) int64 {
	p, ok := readProvider(t, base, uuid)
	if !ok {
		return -1
	}
	for _, inv := range p.Inventories {
		return inv.Reserved
	}
	return -2
}

// generation is the provider's generation, -1 without provider.
func (r *eventRig) generation(uuid string) int {
	var rp struct{ Generation int }
	if placementGet(r.t, r.placement, "/resource_providers/"+uuid, &rp) != 200 {
		return -1
	}
	return rp.Generation
}

// eventChange makes a change in Ironic and waits for Placement to show
// it, checking that no full cycle ran meanwhile: the event did it.
func (r *eventRig) eventChange(what string, change func(), done func() bool) {
	r.t.Helper()
	took := r.bySync(what, change, done)
	r.t.Logf("FIGURE %s reached Placement %.2f s after the Ironic call returned (full cycles every 10 min)", what, took.Seconds())
}

// bySync makes a change and waits until done, failing unless a node sync
// ran and no full cycle did; it returns how long done took.
func (r *eventRig) bySync(what string, change func(), done func() bool) time.Duration {
	r.t.Helper()
	cycles, syncs := r.cycles(), r.metric("rpengine_node_syncs_total")
	change()
	took := r.within(30*time.Second, what, done)
	if c := r.cycles(); c != cycles {
		r.t.Fatalf("%s: %v full cycles ran meanwhile; the event was to do it", what, c-cycles)
	}
	if r.metric("rpengine_node_syncs_total") <= syncs {
		r.t.Fatalf("%s: no node sync ran", what)
	}
	return took
}

// Ironic's notifications drive the engine: each change reaches Placement
// through a node sync while full cycles are 10 minutes apart; a bus
// outage brings full cycles back to engine.interval without an error
// storm, and the reconnect recovers; duplicated, replayed and forged
// messages write nothing wrong.
func TestEventsDriveTheEngineE2E(t *testing.T) {
	r := newEventRig(t)
	a := r.ironic.Create(t, ironictest.Spec{Name: "ev-a-" + r.id, ResourceClass: "baremetal"})
	b := r.ironic.Create(t, ironictest.Spec{Name: "ev-b-" + r.id, ResourceClass: "baremetal"})
	r.ironic.Available(t, a)
	r.ironic.Available(t, b)
	r.start()
	r.within(60*time.Second, "first full cycle", func() bool { return r.reserved(a) == 0 && r.reserved(b) == 0 })
	r.within(60*time.Second, "bus connected and the connect's full cycle done", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2
	})
	time.Sleep(4 * time.Second) // past engine.interval: from now on only events move Placement

	r.eventChange("maintenance set", func() { r.ironic.Maintenance(t, a, true) }, func() bool { return r.reserved(a) == 1 })
	r.eventChange("maintenance unset", func() { r.ironic.Maintenance(t, a, false) }, func() bool { return r.reserved(a) == 0 })
	r.eventChange("manage", func() { r.ironic.Provision(t, b, nodes.TargetManage, "manageable") }, func() bool { return r.reserved(b) == 1 })
	r.eventChange("provide", func() { r.ironic.Provision(t, b, nodes.TargetProvide, "available") }, func() bool { return r.reserved(b) == 0 })
	var c string
	r.eventChange("enroll", func() { c = r.ironic.Create(t, ironictest.Spec{Name: "ev-c-" + r.id, ResourceClass: "baremetal"}) },
		func() bool { return c != "" && r.reserved(c) >= 0 })
	r.ironic.Delete(t, c)
	// Not a candidate at once: the node sync that finds it gone reserves
	// it in full (or the proofs have already deleted it).
	gone := r.within(5*time.Second, "deleted node no longer a candidate", func() bool { v := r.reserved(c); return v == 1 || v == -1 })
	t.Logf("FIGURE deleted node no longer a candidate %.2f s after the Ironic call", gone.Seconds())
	took := r.within(30*time.Second, "delete", func() bool { return r.reserved(c) == -1 })
	t.Logf("FIGURE delete reached Placement %.2f s after the Ironic call (two proofs, delete_grace 0s)", took.Seconds())
	if lag := r.metric("rpengine_event_lag_seconds_count"); lag < 5 {
		t.Errorf("event lag histogram has %v samples, want one per change at least", lag)
	}
	t.Logf("FIGURE event lag: %v samples, %.3f s in all", r.metric("rpengine_event_lag_seconds_count"), r.metric("rpengine_event_lag_seconds_sum"))

	r.forged(a, b)
	r.outage(a)
}

// forged publishes lies, replays and garbage on Ironic's topic: Placement
// must not change (every node is re-read; garbage costs a full cycle).
func (r *eventRig) forged(a, b string) {
	t := r.t
	r.within(10*time.Second, "settled", func() bool { return r.reserved(a) == 0 && r.reserved(b) == 0 })
	ga, gb := r.generation(a), r.generation(b)
	received := r.metric("rpengine_events_received_total")
	lie := func(kind, uuid string) []byte {
		inner := fmt.Sprintf(`{"priority":"info","event_type":%q,"timestamp":"2020-01-01 00:00:00.000000","publisher_id":"ironic-api.forged","message_id":"x","payload":{"ironic_object.data":{"uuid":%q,"maintenance":true,"provision_state":"manageable"}}}`, kind, uuid)
		return []byte(fmt.Sprintf(`{"oslo.version":"2.0","oslo.message":%q}`, inner))
	}
	const ghost = "0badf00d-0000-4000-8000-000000000001"
	msgs := [][]byte{lie("baremetal.node.maintenance_set.end", a), lie("baremetal.node.maintenance_set.end", a),
		lie("baremetal.node.provision_set.end", b), lie("baremetal.node.delete.end", b), lie("baremetal.node.create.end", ghost),
		lie("baremetal.node.update.end", b), lie("baremetal.node.maintenance_set.start", a), []byte("not json"),
		[]byte(`{"event_type":"baremetal.node.update.end","payload":{}}`)}
	failed := r.metric("rpengine_events_failed_total")
	for _, m := range msgs {
		if err := r.bus.Publish(context.Background(), "ironic", "ironic_versioned_notifications.info", m); err != nil {
			t.Fatal(err)
		}
	}
	r.within(30*time.Second, "forged messages received", func() bool {
		return r.metric("rpengine_events_received_total") >= received+float64(len(msgs))
	})
	time.Sleep(2 * time.Second) // their node syncs, and the full cycle the missing ghost asks for
	if r.generation(a) != ga || r.generation(b) != gb || r.reserved(a) != 0 || r.reserved(b) != 0 {
		t.Fatalf("forged messages changed Placement: a gen %d→%d reserved %d, b gen %d→%d reserved %d",
			ga, r.generation(a), r.reserved(a), gb, r.generation(b), r.reserved(b))
	}
	if r.reserved(ghost) != -1 {
		t.Fatal("a forged create made a provider")
	}
	if f := r.metric("rpengine_events_failed_total") - failed; f < 1 {
		t.Errorf("unreadable messages: failed count rose by %v, want at least 1", f)
	}
	t.Logf("forged: %d messages, 0 writes; fallbacks %v", len(msgs), r.metric("rpengine_events_fallbacks_total"))
}

// outage stops the bus: full cycles come back every engine.interval and
// carry a change to Placement; the reconnect's backoff keeps the log
// quiet; after the restart events drive the engine again.
func (r *eventRig) outage(a string) {
	t := r.t
	r.bus.Stop()
	r.within(30*time.Second, "disconnect seen", func() bool { return r.metric("rpengine_events_connected") == 0 })
	before := r.cycles()
	warnBefore := countLines(r.logPath, "level=WARN")
	start := time.Now()
	r.ironic.Maintenance(t, a, true)
	r.within(30*time.Second, "maintenance during the outage", func() bool { return r.reserved(a) == 1 })
	took := time.Since(start)
	time.Sleep(10 * time.Second)
	if n := r.cycles() - before; n < 2 {
		t.Fatalf("%v full cycles in the outage; want engine.interval's pace (3 s)", n)
	}
	warns := countLines(r.logPath, "level=WARN") - warnBefore
	if warns > 12 {
		t.Fatalf("%d warnings in ~15 s of outage: an error storm", warns)
	}
	t.Logf("FIGURE outage: maintenance reached Placement by full cycle %.1f s after the Ironic call began; %v full cycles and %d warnings in the outage",
		took.Seconds(), r.cycles()-before, warns)
	if err := r.bus.Restart(); err != nil {
		t.Fatal(err)
	}
	r.within(60*time.Second, "reconnected", func() bool { return r.metric("rpengine_events_connected") == 1 })
	time.Sleep(5 * time.Second) // the reconnect's full cycle
	r.eventChange("maintenance unset after the outage", func() { r.ironic.Maintenance(t, a, false) }, func() bool { return r.reserved(a) == 0 })
}

func countLines(path, substr string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), substr)
}

// A change Ironic does not announce — maintenance and fault set in its
// database, as the conductor does after failed power syncs — reaches
// Placement through the probe of recently changed nodes within the probe
// period and 2 s, with full cycles 10 minutes apart.
func TestEventsProbeSeesUnannouncedChangeE2E(t *testing.T) {
	const period = 3 * time.Second
	r := newEventRig(t, `probe_interval = "3s"`)
	a := r.ironic.Create(t, ironictest.Spec{Name: "pr-a-" + r.id, ResourceClass: "baremetal"})
	r.ironic.Available(t, a)
	r.start()
	r.within(60*time.Second, "first full cycle", func() bool { return r.reserved(a) == 0 })
	r.within(60*time.Second, "bus connected and the connect's full cycle done", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2
	})
	r.within(30*time.Second, "a probe ran", func() bool { return r.metric("rpengine_events_probes_total") >= 1 })
	time.Sleep(4 * time.Second) // past engine.interval: from now on only events and the probe move Placement
	cycles, received := r.cycles(), r.metric("rpengine_events_received_total")
	ironictest.ConductorMaintenance(t, r.ironicURL, a)
	took := r.within(period+2*time.Second, "conductor-set maintenance in Placement", func() bool { return r.reserved(a) == 1 })
	if c := r.cycles(); c != cycles {
		t.Fatalf("%v full cycles ran meanwhile; the probe was to find it", c-cycles)
	}
	if n := r.metric("rpengine_events_received_total"); n != received {
		t.Fatalf("%v notifications arrived: the change was to be unannounced", n-received)
	}
	if n := r.metric("rpengine_events_probe_changed_total"); n < 1 {
		t.Fatalf("probe_changed_total %v, want the node counted", n)
	}
	t.Logf("FIGURE unannounced maintenance reached Placement %.2f s after the database write (probe every %s)", took.Seconds(), period)
}
