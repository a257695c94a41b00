package daemon

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/ops"
)

// Setup is one loaded configuration: its plugin, its engine, its settings.
type Setup interface {
	// Cycle runs one reconcile. ctx ends only at the stop timeout; a
	// stop reaches the engine through the Loader's stop channel.
	Cycle(ctx context.Context) engine.Report
	// Save writes the provider cache.
	Save() error
	Settings() Settings
	// Close releases the plugin; the loop calls it once, after the
	// setup's last cycle.
	Close(ctx context.Context)
}

// Settings are what the loop needs of a configuration.
type Settings struct {
	Interval    time.Duration // between cycles, before jitter
	StopTimeout time.Duration // longest wait for writes in flight on stop
	// FullInterval is the time between full cycles while an EventSetup's
	// events flow (events.go); 0 or at most Interval: no difference.
	FullInterval time.Duration
	LogLevel     slog.Level
	Info         ops.Info
}

// Loader builds a setup. stop closes when the daemon stops: the setup's
// engine must take it as engine.Options.Stop (and its plugin calls may end
// with it, see ops.StoppableSource). prev is the setup in use, nil at
// start; the new setup may keep prev's provider cache. A reload runs the
// Loader while prev is cycling.
type Loader func(ctx context.Context, stop <-chan struct{}, prev Setup) (Setup, error)

// Loop runs cycles until its context ends.
type Loop struct {
	Load   Loader
	Reload <-chan struct{} // one value per reload request (SIGHUP)
	// Now asks for a cycle at once (SIGUSR1); requests during a cycle
	// merge into one cycle right after it.
	Now <-chan struct{}
	// Asks are run between cycles and node syncs, one at a time, on the
	// setup in use: the local API's plans, which must not run beside a
	// cycle (it changes the engine's scope and memory).
	Asks  <-chan Ask
	Log   *slog.Logger
	Ops   *ops.Ops
	Level *slog.LevelVar // set from Settings.LogLevel at each load; may be nil
	// Jitter is the largest fraction of the interval added to each wait,
	// so engines started together do not hit Placement in step.
	Jitter float64
	// Cycled, if set, is called after each cycle is recorded (tests).
	Cycled func(engine.Report)

	errors errorLog
}

// Ask is work run on the setup in use between cycles; ctx ends when the
// daemon stops.
type Ask func(ctx context.Context, w Setup)

type loaded struct {
	w   Setup
	err error
}

// Run loads the first setup, then cycles until ctx ends. A stop during a
// cycle ends the loop after that cycle; its state is saved. Run fails
// only if the first load does.
func (l *Loop) Run(ctx context.Context) error {
	stop := ctx.Done()
	w, err := l.Load(ctx, stop, nil)
	if err != nil {
		return err
	}
	l.activate(w, nil)
	l.notify(sd.SdNotifyReady)
	defer l.notify(sd.SdNotifyStopping)
	go l.watchDependencies(ctx)
	go l.watchdog(ctx)
	r := reloader{loop: l, ctx: ctx, stop: stop, results: make(chan loaded, 1)}
	defer func() { r.abandon(); w.Close(context.Background()) }()

	for {
		start := time.Now()
		done := make(chan engine.Report, 1)
		go func() { done <- l.cycle(ctx, w) }()
		var rep engine.Report
		again, distrust := false, false
		for waiting := true; waiting; {
			select {
			case rep = <-done:
				waiting = false
			case b := <-besideCycles(w):
				// Changes before resyncs: the engine orders the two
				// runs' writes (engine/order.go).
				distrust = l.syncNodes(ctx, w, b) != "" || distrust
			case <-l.Now:
				again = true
			case <-l.Reload:
				r.request(w)
			case res := <-r.results:
				r.finished(res, w)
			}
		}
		end := l.finish(w, rep, start, ctx.Err() != nil)
		if ctx.Err() != nil {
			l.Log.Info("stopped after the cycle in flight; state saved")
			return nil
		}
		nw := r.swap(w)
		again = again || nw != w // a reload applies at once
		w = nw
		if !again {
			var stopped bool
			if w, stopped = l.idle(ctx, &r, w, rep, end, distrust); stopped {
				return nil
			}
		}
	}
}

// idle waits for the next full cycle: the interval from the last cycle's
// end (longer while events flow, sooner for a follow-up), syncing the
// nodes events name meanwhile; a request for a cycle now, or a reload,
// which applies at once, ends it early. fallback says a node sync during
// the cycle found the events untrustworthy. It reports whether the daemon
// is stopping.
func (l *Loop) idle(ctx context.Context, r *reloader, w Setup, rep engine.Report, end time.Time, fallback bool) (Setup, bool) {
	wait, soon := l.wait(w), followUp(w, rep)
	if soon > 0 {
		wait = min(wait, soon)
	}
	timer := time.NewTimer(time.Until(end.Add(wait)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Log.Info("stopped between cycles")
			return w, true
		case <-timer.C:
			if d := l.quiet(w, end); d > 0 && soon == 0 && !fallback { // events flow: the full cycle waits longer
				timer.Reset(d)
				continue
			}
			return w, false
		case b := <-hints(w):
			// Events that cannot be trusted bring the full cycle back to
			// engine.interval, the periodic engine's pace, never sooner:
			// a stream of bad messages costs no more full cycles than
			// running without events.
			if why := l.syncNodes(ctx, w, b); why != "" && !fallback {
				fallback = true
				l.Log.Info("full cycle at engine.interval: events cannot be trusted", "why", why)
				timer.Reset(max(0, time.Until(end.Add(l.wait(w)))))
			}
		case <-l.Now:
			l.Log.Info("cycle requested (SIGUSR1, the API, or peers changed in etcd): starting it now")
			return w, false
		case ask := <-l.Asks:
			ask(ctx, w)
		case <-l.Reload:
			r.request(w)
		case res := <-r.results:
			r.finished(res, w)
			if nw := r.swap(w); nw != w {
				l.Log.Info("reloaded: starting a cycle with the new configuration now")
				return nw, false
			}
		}
	}
}

// cycle runs one cycle on a context that a stop does not cancel: the
// engine sees the stop through its Stop channel, finishes the providers in
// flight and starts no other. Only past the stop timeout is ctx cancelled,
// cutting what is still in flight.
func (l *Loop) cycle(ctx context.Context, w Setup) engine.Report {
	cctx, cancel := l.guard(ctx, w)
	defer cancel()
	l.Ops.CycleStarted()
	// One global request id per cycle, sent to Placement with each of its
	// requests and logged, so Placement's log joins the engine's.
	id := placement.NewGlobalRequestID()
	l.Log.Info("cycle started", "global_request_id", id)
	return w.Cycle(placement.WithGlobalRequestID(cctx, id))
}

// guard is a context for the setup's work that a stop does not cancel
// until the stop timeout has passed.
func (l *Loop) guard(ctx context.Context, w Setup) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
		case <-cctx.Done():
			return
		}
		timeout := w.Settings().StopTimeout
		l.Log.Info("stopping: finishing the providers in flight", "timeout", timeout)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
			l.Log.Warn("stop timeout passed: cancelling writes in flight (engine.stop_timeout)", "timeout", timeout)
			cancel()
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// finish saves the cache and records the cycle; it returns the end time.
// A cycle the stop cut before any write is not counted: a SIGTERM during
// a quiet cycle is not a failure.
func (l *Loop) finish(w Setup, r engine.Report, start time.Time, stopped bool) time.Time {
	if err := w.Save(); err != nil {
		l.Log.Warn("state cache not saved", "err", err)
	}
	if stopped && cutBeforeAnyWrite(r) {
		l.Ops.CycleStopped()
		l.Log.Info("cycle ended by the stop before any write; not counted", "errors", r.Errors,
			"duration_ms", r.DurationMS)
		if l.Cycled != nil {
			l.Cycled(r)
		}
		return time.Now()
	}
	outcome := l.Ops.CycleDone(r, start)
	l.Log.Info("cycle", "outcome", outcome, "nodes", r.Nodes, "instances", r.Instances,
		"created", r.Created, "updated", r.Updated, "unchanged", r.Unchanged, "deleted", r.Deleted,
		"quarantined", r.Quarantined, "conflicts", r.Conflicts, "errors", len(r.Errors),
		"placement_requests", r.PlacementRequests, "duration_ms", r.DurationMS)
	l.errors.record(l.Log, r, time.Now())
	if l.Cycled != nil {
		l.Cycled(r)
	}
	return time.Now()
}

// cutBeforeAnyWrite says whether a cycle that saw the stop changed
// nothing and failed only because of it: a plugin listing the stop cut
// short (StoppableSource cancels it, whatever the plugin then says: a
// Wasm plugin reports "canceled by the caller"), or the providers left
// deferred.
func cutBeforeAnyWrite(r engine.Report) bool {
	if r.Created+r.Updated+r.Deleted > 0 || len(r.Errors) == 0 || r.Nova != nil && r.Nova.Placed+r.Nova.Released > 0 {
		return false
	}
	for _, e := range r.Errors {
		pluginListing := e.Kind == engine.ErrListing &&
			(strings.HasPrefix(e.Message, "list nodes: ") || strings.HasPrefix(e.Message, "list instances: "))
		if e.Kind != engine.ErrDeferred && !pluginListing && !strings.Contains(e.Message, context.Canceled.Error()) {
			return false
		}
	}
	return true
}

// watchDependencies logs the outside services failing, once per
// interval: not once per request, and not never (ops/deps.go).
func (l *Loop) watchDependencies(ctx context.Context) {
	for {
		every := l.Ops.Interval()
		if every <= 0 {
			every = time.Minute
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		l.Ops.LogDependencies(l.Log)
	}
}

func (l *Loop) wait(w Setup) time.Duration {
	d := w.Settings().Interval
	if l.Jitter > 0 {
		d += time.Duration(rand.Int64N(int64(float64(d)*l.Jitter) + 1))
	}
	return d
}

// activate makes w the setup in use.
func (l *Loop) activate(w Setup, prev Setup) {
	s := w.Settings()
	if l.Level != nil {
		l.Level.Set(s.LogLevel)
	}
	l.Ops.Configure(s.Info)
	if prev != nil {
		prev.Close(context.Background())
	}
}
