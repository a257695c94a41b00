package daemon_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops/daemon"
	"github.com/rpengine/rpengine/internal/testing/memsource"
)

// startNow is start with a channel of cycle-now requests (SIGUSR1).
func (r *rig) startNow(reload, now <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &daemon.Loop{Load: r.load, Reload: reload, Now: now, Log: slog.New(slog.NewTextHandler(r.logs, nil)), Ops: r.ops,
		Cycled: func(rep engine.Report) { r.cycled <- rep }}
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	r.t.Cleanup(func() { cancel(); <-errc })
}

// quiet says no cycle is recorded before the loop settles: with an
// hour's interval, none may come without a request.
func (r *rig) quiet() {
	r.t.Helper()
	select {
	case rep := <-r.cycled:
		r.t.Fatalf("a cycle nobody asked for: %+v", rep)
	case <-time.After(200 * time.Millisecond):
	}
}

// A request starts a cycle at once, without waiting for the interval;
// requests during a cycle merge into one cycle right after it.
func TestCycleNowIsImmediateAndCoalesced(t *testing.T) {
	r := newRig(t, 3)
	r.conf.interval = time.Hour
	now := make(chan struct{}) // unbuffered: each send is taken by the loop
	gate, entered := make(chan struct{}), make(chan int, 10)
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = gate, entered })
	r.startNow(nil, now)
	<-entered
	close(gate)
	if rep := r.next(); rep.Created != 3 {
		t.Fatalf("first cycle: %+v", rep)
	}
	r.quiet()

	gate = make(chan struct{})
	r.src.Update(func(st *memsource.State) { st.Gate = gate })
	now <- struct{}{}
	<-entered // the requested cycle is under way
	for range 3 {
		now <- struct{}{} // the loop takes each: they merge into one
	}
	close(gate)
	if rep := r.next(); rep.Unchanged != 3 {
		t.Fatalf("requested cycle: %+v", rep)
	}
	<-entered
	if rep := r.next(); rep.Unchanged != 3 {
		t.Fatalf("the merged cycle: %+v", rep)
	}
	r.quiet()
}

// A reload applies at once: the new configuration's cycle does not wait
// for the interval.
func TestReloadAppliesAtOnce(t *testing.T) {
	r := newRig(t, 2)
	r.conf.interval = time.Hour
	reload := make(chan struct{}, 1)
	r.startNow(reload, nil)
	r.next()
	r.setConf(func(c *conf) { c.markers = []string{"COMPUTE_NODE", "CUSTOM_RELOADED"} })
	reload <- struct{}{}
	if rep := r.next(); rep.Updated != 2 {
		t.Fatalf("cycle after the reload: %+v", rep)
	}
}

// An ask (the API's plan) sent during a cycle runs after it, between
// cycles, on the setup in use; never beside a cycle.
func TestAsksRunBetweenCycles(t *testing.T) {
	r := newRig(t, 2)
	r.conf.interval = time.Hour
	asks := make(chan daemon.Ask)
	gate, entered := make(chan struct{}), make(chan int, 10)
	r.src.Update(func(st *memsource.State) { st.Gate, st.Entered = gate, entered })
	ctx, cancel := context.WithCancel(context.Background())
	l := &daemon.Loop{Load: r.load, Asks: asks, Log: slog.New(slog.NewTextHandler(r.logs, nil)), Ops: r.ops,
		Cycled: func(rep engine.Report) { r.cycled <- rep }}
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	<-entered // the first cycle is under way
	ran := make(chan daemon.Setup, 1)
	sent := make(chan struct{})
	go func() {
		asks <- func(_ context.Context, w daemon.Setup) {
			select {
			case <-r.cycled:
				ran <- w // the cycle was recorded before the ask ran
			default:
				ran <- nil
			}
		}
		close(sent)
	}()
	select {
	case <-sent:
		t.Fatal("the loop took an ask during a cycle")
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	if w := <-ran; w == nil {
		t.Fatal("the ask ran before the cycle in flight was recorded")
	}
	r.quiet()
}
