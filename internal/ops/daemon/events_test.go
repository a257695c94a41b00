package daemon_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// eventSetup is a timedSetup with an event source: batches arrive on
// hints, NodeSync records them and asks for a full cycle when told to.
type eventSetup struct {
	timedSetup
	hints chan events.Batch
	live  atomic.Bool
	syncs atomic.Int32
}

func (w *eventSetup) Hints() <-chan events.Batch { return w.hints }
func (w *eventSetup) EventsLive() bool           { return w.live.Load() }
func (w *eventSetup) NodeSync(_ context.Context, b events.Batch) string {
	w.syncs.Add(1)
	w.log.add("sync", w.name)
	if b.Lost {
		return "lost"
	}
	return ""
}

// With the bus connected, full cycles come every FullInterval and each
// batch is a node sync between them; a batch that lost messages brings
// the full cycle forward; with the bus down the pace is Interval again.
func TestEventsPaceFullCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval, full = 10 * time.Second, 100 * time.Second
		tl := &timeline{}
		w := &eventSetup{timedSetup: timedSetup{name: "a", work: time.Second, log: tl,
			settings: daemon.Settings{Interval: interval, FullInterval: full, StopTimeout: time.Second}},
			hints: make(chan events.Batch)}
		w.live.Store(true)
		l := newLoop(func(context.Context, <-chan struct{}, daemon.Setup) (daemon.Setup, error) { return w, nil }, nil)
		l.Jitter = 0
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()

		time.Sleep(50 * time.Second) // first cycle at 0; none more while events flow
		w.hints <- events.Batch{Messages: []events.Message{{Body: []byte("{}")}}}
		synctest.Wait()
		if n := len(tl.all("start")); n != 1 || w.syncs.Load() != 1 {
			t.Fatalf("at 50 s: %d cycles, %d node syncs; want 1 and 1", n, w.syncs.Load())
		}
		time.Sleep(60 * time.Second) // 110 s: the first cycle ended at 1 s, so the second starts at 101 s
		if s := tl.all("start"); len(s) != 2 || s[1].at.Sub(s[0].at) != 101*time.Second {
			t.Fatalf("full cycles at %v; want the second 101 s after the first", s)
		}
		w.hints <- events.Batch{Lost: true, Why: "reconnected"}
		w.hints <- events.Batch{Lost: true, Why: "again"} // a storm of bad batches: still one cycle per interval
		time.Sleep(5 * time.Second)                       // 115 s: the second cycle ended at 102 s
		if s := tl.all("start"); len(s) != 3 || s[2].at.Sub(s[1].at) != 11*time.Second {
			t.Fatalf("full cycles at %v; want a lost batch to bring the third to one interval after the second ended", s)
		}
		w.live.Store(false) // the bus is down: back to Interval
		before := len(tl.all("start"))
		time.Sleep(3*interval + 5*time.Second)
		if n := len(tl.all("start")) - before; n != 3 {
			t.Fatalf("with the bus down, %d full cycles in %s; want 3", n, 3*interval+5*time.Second)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// besideSetup's node syncs may run while a full cycle runs.
type besideSetup struct{ *eventSetup }

func (w *besideSetup) SyncsBesideCycles() bool { return true }

// Changes before resyncs: a batch that arrives while a long full cycle
// runs is synced at once, not after the cycle; a setup that did not say
// its node syncs may run beside cycles keeps them waiting for the cycle.
func TestNodeSyncsRunDuringALongCycle(t *testing.T) {
	for _, beside := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			tl := &timeline{}
			ev := &eventSetup{timedSetup: timedSetup{name: "a", work: 100 * time.Second, log: tl,
				settings: daemon.Settings{Interval: time.Hour, FullInterval: time.Hour, StopTimeout: time.Second}},
				hints: make(chan events.Batch, 1)}
			ev.live.Store(true)
			var w daemon.Setup = ev
			if beside {
				w = &besideSetup{ev}
			}
			l := newLoop(func(context.Context, <-chan struct{}, daemon.Setup) (daemon.Setup, error) { return w, nil }, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- l.Run(ctx) }()
			time.Sleep(10 * time.Second)
			hintsOf(w) <- events.Batch{Messages: []events.Message{{Body: []byte("{}")}}}
			time.Sleep(time.Second)
			synctest.Wait()
			syncs := tl.all("sync")
			if beside && (len(syncs) != 1 || syncs[0].at.Sub(tl.all("start")[0].at) != 10*time.Second) {
				t.Fatalf("node syncs %v: want one, 10 s into the 100 s cycle", syncs)
			}
			if !beside && len(syncs) != 0 {
				t.Fatalf("node syncs %v during the cycle of a setup that did not allow them", syncs)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func hintsOf(w daemon.Setup) chan events.Batch {
	if b, ok := w.(*besideSetup); ok {
		return b.hints
	}
	return w.(*eventSetup).hints
}
