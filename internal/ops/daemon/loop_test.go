package daemon_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/memsource"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// SIGTERM mid-cycle: the providers in flight finish, no new one starts,
// the cache is saved, and the next process resumes without re-reading
// what was written.
func TestStopMidCycleLosesNothing(t *testing.T) {
	const nodes, stopAt = 40, 6
	r := newRig(t, nodes)
	// Slow writes keep several providers in flight when the stop comes.
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.progress = func(done, total int) {
		if done == stopAt {
			cancel() // SIGTERM, as main's NotifyContext delivers it
		}
	}
	errc := r.startWith(ctx, nil)
	rep := r.next()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	if !slices.ContainsFunc(rep.ErrorMessages(), func(e string) bool { return strings.HasPrefix(e, "stopping: ") }) {
		t.Fatalf("report does not say what it skipped: %v", rep.Errors)
	}
	written := r.fake.ProviderUUIDs()
	if rep.Created < stopAt || rep.Created >= nodes || len(written) != rep.Created {
		t.Fatalf("created %d (fake holds %d) of %d; want the stop to land mid-cycle", rep.Created, len(written), nodes)
	}
	for _, uuid := range written {
		if err := r.complete(uuid, []string{"COMPUTE_NODE"}); err != nil {
			t.Error(err)
		}
	}
	for _, req := range r.fake.Requests() {
		if req.Status == 0 {
			t.Errorf("request cut off: %s %s", req.Method, req.Path)
		}
	}
	if !r.worlds[0].isClosed() {
		t.Error("plugin not closed on stop")
	}

	// A new process: the saved cache spares every re-read.
	r.fake.ClearFaults()
	r.fake.ResetRequests()
	r.progress = nil
	stop := r.start(nil)
	rep = r.next()
	stop()
	if len(rep.Errors) > 0 || rep.Created != nodes-len(written) || rep.Unchanged != len(written) {
		t.Fatalf("resumed cycle: created %d unchanged %d errors %v", rep.Created, rep.Unchanged, rep.Errors)
	}
	if reads := r.fake.Find("GET", "/resource_providers/*/inventories"); len(reads) > 0 {
		t.Fatalf("%d providers re-read: the state was not saved on stop", len(reads))
	}
}

// A stop during the plugin's listing ends the cycle at once: nothing has
// been written, so nothing needs finishing.
func TestStopDuringListingEndsTheCycleAtOnce(t *testing.T) {
	r := newRig(t, 5)
	gate, entered := make(chan struct{}), make(chan int, 1)
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = gate, entered })
	stop := r.start(nil)
	<-entered
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rep := r.next()
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "list nodes: context canceled; no writes") {
		t.Fatalf("errors %v", rep.Errors)
	}
	if n := len(r.fake.ProviderUUIDs()); n != 0 {
		t.Fatalf("%d providers written after a failed listing", n)
	}
	if got := r.ops.Metrics.PluginCalls("list_nodes", "canceled"); got != 1 {
		t.Fatalf("canceled listings counted %v", got)
	}
}

// The same stop during a Wasm plugin's listing, which words the
// cancellation its own way: no ERROR, no failed cycle.
func TestStopDuringPluginListingIsNoFailure(t *testing.T) {
	r := newRig(t, 5)
	gate, entered := make(chan struct{}), make(chan int, 1)
	r.src.Update(func(st *memsource.State) {
		st.Gate, st.Entered = gate, entered
		st.Canceled = errors.New("plugin ironic.wasm: list_nodes: timeout: canceled by the caller; its answer is discarded")
	})
	stop := r.start(nil)
	<-entered
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rep := r.next()
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "canceled by the caller") {
		t.Fatalf("errors %v", rep.Errors)
	}
	if logs := r.logs.String(); strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "not counted") {
		t.Fatalf("a stop during a listing logged:\n%s", logs)
	}
}

// Past engine.stop_timeout a write still in flight is cut: the daemon
// must not hang forever on a Placement that stopped answering.
func TestStopTimeoutCutsWritesStillInFlight(t *testing.T) {
	r := newRig(t, 3)
	r.conf.stopTimeout = 20 * time.Millisecond
	r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Delay: time.Hour})
	stop := r.start(nil)
	r.waitFor(func() bool { return len(r.fake.Find("PUT", "/resource_providers/*/inventories")) > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if rep := r.next(); len(rep.Errors) == 0 {
		t.Fatal("a cut cycle reported no error")
	}
	if !strings.Contains(r.logs.String(), "stop timeout passed") {
		t.Fatalf("logs do not say the writes were cut:\n%s", r.logs)
	}
}

// SIGHUP: the new configuration takes over at a cycle boundary.
func TestReloadTakesEffect(t *testing.T) {
	const nodes = 6
	r := newRig(t, nodes)
	reload := make(chan struct{}, 1)
	stop := r.start(reload)
	defer stop()
	if rep := r.next(); rep.Created != nodes {
		t.Fatalf("first cycle %+v", rep)
	}
	r.setConf(func(c *conf) { c.markers = []string{"COMPUTE_NODE", "CUSTOM_RELOADED"} })
	reload <- struct{}{}
	r.until(func(rep engine.Report) bool { return rep.Updated == nodes })
	for i := range nodes {
		if err := r.complete(nodeUUID(i), []string{"COMPUTE_NODE", "CUSTOM_RELOADED"}); err != nil {
			t.Fatal(err)
		}
	}
	if !r.worlds[0].isClosed() || r.worlds[1].isClosed() {
		t.Fatal("the old world must be closed and the new one open")
	}
	if got := testutil.ToFloat64(r.ops.Metrics.Reloads("ok")); got != 1 {
		t.Fatalf("reloads ok = %v", got)
	}
}

// A reload that fails keeps the running configuration and says why.
func TestBrokenReloadKeepsTheOldConfiguration(t *testing.T) {
	r := newRig(t, 4)
	reload := make(chan struct{}, 1)
	stop := r.start(reload)
	defer stop()
	r.next()
	r.setConf(func(c *conf) {
		c.markers = []string{"CUSTOM_NEVER"}
		c.broken = errors.New("config /etc/rpengine/engine.toml: line 3, key engine.interval: bad duration")
	})
	reload <- struct{}{}
	r.waitFor(func() bool { return testutil.ToFloat64(r.ops.Metrics.Reloads("failed")) == 1 })
	for range 3 { // cycles go on, clean, with the old configuration
		if rep := r.next(); len(rep.Errors) > 0 {
			t.Fatalf("cycle after a failed reload: %v", rep.Errors)
		}
	}
	p, _ := r.fake.Provider(nodeUUID(0))
	if slices.Contains(p.Traits, "CUSTOM_NEVER") || r.worlds[0].isClosed() || len(r.worlds) != 1 {
		t.Fatalf("the broken configuration leaked in: traits %v", p.Traits)
	}
	if s := r.ops.Snapshot(); s.ReloadOK || !strings.Contains(s.Reload, "bad duration") {
		t.Fatalf("status page reload: %q", s.Reload)
	}
	if !strings.Contains(r.logs.String(), "reload failed: keeping the running configuration and plugin") {
		t.Fatalf("logs:\n%s", r.logs)
	}

	r.setConf(func(c *conf) { c.broken = nil; c.markers = []string{"COMPUTE_NODE"} })
	reload <- struct{}{}
	r.waitFor(func() bool { return testutil.ToFloat64(r.ops.Metrics.Reloads("ok")) == 1 })
}

// A reload that arrives mid-cycle is loaded beside it; the cycle in
// flight finishes on the old configuration, the next runs on the new.
func TestReloadDuringACycleDropsNoCycle(t *testing.T) {
	const nodes = 5
	r := newRig(t, nodes)
	reload := make(chan struct{}, 1)
	stop := r.start(reload)
	defer stop()
	r.next()

	gate, entered := make(chan struct{}), make(chan int, 1)
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = gate, entered })
	call := <-entered // the held cycle is listing; cycles before it may have run since
	r.setConf(func(c *conf) { c.markers = []string{"COMPUTE_NODE", "CUSTOM_V2"} })
	reload <- struct{}{}
	r.waitFor(func() bool { return testutil.ToFloat64(r.ops.Metrics.Reloads("ok")) == 1 })
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = nil, nil })
	close(gate)

	for range call - 2 {
		r.next()
	}
	held := r.next()
	if len(held.Errors) > 0 {
		t.Fatalf("the cycle in flight failed: %v", held.Errors)
	}
	if held.Nodes != nodes || held.Updated != 0 {
		t.Fatalf("the cycle in flight ran on the new configuration: %+v", held)
	}
	if next := r.next(); next.Updated != nodes {
		t.Fatalf("the next cycle did not apply the new configuration: %+v", next)
	}
}

func (r *rig) until(ok func(engine.Report) bool) {
	r.t.Helper()
	for range 100 {
		if ok(r.next()) {
			return
		}
	}
	r.t.Fatalf("condition not met in 100 cycles; logs:\n%s", r.logs)
}

func (r *rig) waitFor(ok func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			r.t.Fatalf("condition not met in 30s; logs:\n%s", r.logs)
		}
		time.Sleep(time.Millisecond)
	}
}

// SIGTERM during a quiet cycle (the listing in flight, nothing to write)
// logged an ERROR and counted a failed cycle: it is neither.
func TestStopDuringAQuietCycleIsNoFailure(t *testing.T) {
	r := newRig(t, 5)
	gate, entered := make(chan struct{}), make(chan int)
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = gate, entered })
	stop := r.start(nil)
	for range 2 { // the cold start, then one quiet cycle
		<-entered
		gate <- struct{}{} // lets this one listing through
		if rep := r.next(); len(rep.Errors) > 0 {
			t.Fatalf("cycle: %v", rep.Errors)
		}
	}
	<-entered // the third listing hangs: SIGTERM now
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if rep := r.next(); len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "context canceled") || rep.Unchanged != 0 {
		t.Fatalf("stopped cycle: %+v", rep)
	}
	if strings.Contains(r.logs.String(), "level=ERROR") {
		t.Fatalf("a stop during a quiet cycle logged an error:\n%s", r.logs.String())
	}
	if got := counter(t, r, `rpengine_cycles_total{outcome="failed"}`); got != 0 {
		t.Fatalf("%v failed cycles counted", got)
	}
	if got := counter(t, r, `rpengine_cycles_total{outcome="ok"}`); got != 2 {
		t.Fatalf("%v ok cycles counted, want 2", got)
	}
}

func counter(t *testing.T, r *rig, series string) float64 {
	t.Helper()
	mfs, err := r.ops.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "{" + l.GetName() + "=\"" + l.GetValue() + "\"}"
			}
			if name == series {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("series %s not found", series)
	return 0
}
