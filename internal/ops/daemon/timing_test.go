package daemon_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// timedSetup is a world without Placement, for the loop's timing in a
// synctest bubble: it records when each cycle started and ended (on the
// bubble's clock) and takes work of the bubble's time per cycle.
type timedSetup struct {
	name     string
	settings daemon.Settings
	work     time.Duration
	block    bool // a cycle waits for its context, as writes to a hung Placement do
	log      *timeline
}

type timeline struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	what, world string
	at          time.Time
}

func (l *timeline) add(what, world string) {
	l.mu.Lock()
	l.events = append(l.events, event{what, world, time.Now()})
	l.mu.Unlock()
}

func (l *timeline) all(what string) []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event
	for _, e := range l.events {
		if e.what == what {
			out = append(out, e)
		}
	}
	return out
}

func (w *timedSetup) Cycle(ctx context.Context) engine.Report {
	w.log.add("start", w.name)
	if w.block {
		<-ctx.Done()
		w.log.add("cut", w.name)
		return engine.Report{Errors: []engine.Error{{Kind: engine.ErrDeferred, Message: ctx.Err().Error()}}}
	}
	time.Sleep(w.work) // the bubble's clock: the cycle's own duration
	w.log.add("end", w.name)
	return engine.Report{}
}
func (w *timedSetup) Save() error               { return nil }
func (w *timedSetup) Settings() daemon.Settings { return w.settings }
func (w *timedSetup) Close(context.Context)     {}
func newLoop(load daemon.Loader, reload <-chan struct{}) *daemon.Loop {
	return &daemon.Loop{Load: load, Reload: reload, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ops: ops.New(nil), Jitter: 0.1}
}

// The next cycle starts one interval (plus at most 10% jitter) after the
// previous one ended, however long that one took.
func TestCyclesStartOneIntervalAfterTheLastEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval, work = 10 * time.Second, 3 * time.Second
		tl := &timeline{}
		w := &timedSetup{name: "a", work: work, log: tl, settings: daemon.Settings{Interval: interval, StopTimeout: time.Minute}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- newLoop(func(context.Context, <-chan struct{}, daemon.Setup) (daemon.Setup, error) { return w, nil }, nil).Run(ctx)
		}()
		time.Sleep(5*(work+interval+interval/10) + time.Second) // room for at least 5 cycles
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		starts, ends := tl.all("start"), tl.all("end")
		if len(starts) < 5 {
			t.Fatalf("%d cycles in the time of 5", len(starts))
		}
		for i := 1; i < len(starts); i++ {
			gap := starts[i].at.Sub(ends[i-1].at)
			if gap < interval || gap > interval+interval/10 {
				t.Errorf("cycle %d started %s after the previous ended; want %s plus at most 10%%", i, gap, interval)
			}
		}
	})
}

// A reload asked for between cycles is loaded at once and applies at
// once: the new configuration's first cycle starts as soon as it is
// loaded, and its interval counts from that cycle's end.
func TestReloadBetweenCyclesAppliesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := &timeline{}
		old := &timedSetup{name: "old", log: tl, settings: daemon.Settings{Interval: time.Minute, StopTimeout: time.Minute}}
		nw := &timedSetup{name: "new", log: tl, settings: daemon.Settings{Interval: 20 * time.Second, StopTimeout: time.Minute}}
		var loads []time.Time
		load := func(_ context.Context, _ <-chan struct{}, prev daemon.Setup) (daemon.Setup, error) {
			loads = append(loads, time.Now())
			if prev == nil {
				return old, nil
			}
			time.Sleep(2 * time.Second) // compiling the new plugin
			return nw, nil
		}
		reload := make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- newLoop(load, reload).Run(ctx) }()
		synctest.Wait() // the first cycle ran; the loop waits out the old interval
		firstEnd := tl.all("end")[0].at
		time.Sleep(5 * time.Second)
		reload <- struct{}{}
		time.Sleep(time.Minute)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(loads) != 2 || loads[1].Sub(firstEnd) != 5*time.Second {
			t.Fatalf("loads at %v; want the reload loaded as soon as asked, 5s after the first cycle", loads)
		}
		starts := tl.all("start")
		if len(starts) < 2 || starts[1].world != "new" {
			t.Fatalf("cycles %v; want the second on the new configuration", starts)
		}
		if gap := starts[1].at.Sub(firstEnd); gap != 7*time.Second {
			t.Fatalf("the first cycle on the new configuration started %s after the last ended; want 7s (asked at 5s, loaded in 2s)", gap)
		}
		ends := tl.all("end")
		if len(starts) < 3 || len(ends) < 2 {
			t.Fatalf("cycles %v", starts)
		}
		if gap := starts[2].at.Sub(ends[1].at); gap < 20*time.Second || gap > 22*time.Second {
			t.Fatalf("the next cycle came %s after the reloaded one ended; want its 20s interval (+10%%)", gap)
		}
	})
}

// A stop while writes hang: the cycle's context is cancelled exactly
// engine.stop_timeout after the stop, not before, and Run then returns.
func TestStopTimeoutCutsTheCycleAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const stopTimeout = 45 * time.Second
		tl := &timeline{}
		w := &timedSetup{name: "hung", block: true, log: tl, settings: daemon.Settings{Interval: time.Minute, StopTimeout: stopTimeout}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- newLoop(func(context.Context, <-chan struct{}, daemon.Setup) (daemon.Setup, error) { return w, nil }, nil).Run(ctx)
		}()
		synctest.Wait() // the cycle is in flight, blocked on its writes
		stopped := time.Now()
		cancel()
		synctest.Wait()
		if cut := tl.all("cut"); len(cut) != 0 {
			t.Fatalf("writes cut at once on stop; want them given %s", stopTimeout)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		cut := tl.all("cut")
		if len(cut) != 1 || cut[0].at.Sub(stopped) != stopTimeout {
			t.Fatalf("cut %v after the stop at %s; want exactly %s later", cut, stopped, stopTimeout)
		}
	})
}
