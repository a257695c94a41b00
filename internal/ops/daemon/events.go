package daemon

import (
	"context"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/events"
)

// EventSetup is a Setup that acts on its source's notifications between
// full cycles ([events]): a node sync per coalesced batch, and full cycles
// only every Settings.FullInterval while the bus is connected.
type EventSetup interface {
	Setup
	// Hints delivers the event source's batches; nil when there is none.
	Hints() <-chan events.Batch
	// NodeSync acts on one batch. It returns "" when done, or why a full
	// cycle must run now (messages lost, unreadable, a node gone, ...).
	NodeSync(ctx context.Context, b events.Batch) (fullCycleWhy string)
	// EventsLive says the source is connected to the bus.
	EventsLive() bool
}

// hints is w's batches, or a nil channel (never ready) without events.
func hints(w Setup) <-chan events.Batch {
	if ew, ok := w.(EventSetup); ok {
		return ew.Hints()
	}
	return nil
}

// BesideCycles is an EventSetup whose node syncs may run while a full
// cycle runs: its engine orders their writes (engine/order.go), and its
// node syncs read through a plugin instance of their own.
type BesideCycles interface {
	SyncsBesideCycles() bool
}

// besideCycles is w's batches while a cycle runs, or a nil channel when
// its node syncs must wait for the cycle.
func besideCycles(w Setup) <-chan events.Batch {
	if b, ok := w.(BesideCycles); ok && b.SyncsBesideCycles() {
		return hints(w)
	}
	return nil
}

// syncNodes runs one node sync under the same stop rules as a cycle.
func (l *Loop) syncNodes(ctx context.Context, w Setup, b events.Batch) string {
	ew, ok := w.(EventSetup)
	if !ok {
		return ""
	}
	cctx, cancel := l.guard(ctx, w)
	defer cancel()
	why := ew.NodeSync(cctx, b)
	if err := w.Save(); err != nil {
		l.Log.Warn("state cache not saved", "err", err)
	}
	return why
}

// quiet is how much longer the next full cycle may wait, when events
// flow: full cycles then come every FullInterval instead of Interval,
// checked at least every Interval, so a bus that goes down brings the
// engine back to its normal pace within one interval.
func (l *Loop) quiet(w Setup, end time.Time) time.Duration {
	ew, ok := w.(EventSetup)
	s := w.Settings()
	if !ok || ew.Hints() == nil || !ew.EventsLive() || s.FullInterval <= s.Interval {
		return 0
	}
	left := time.Until(end.Add(s.FullInterval))
	if left <= 0 {
		return 0
	}
	return min(left, s.Interval)
}

// FollowUpper is an EventSetup that may want the next full cycle sooner
// than its interval after a cycle (e.g. the second proof of a node
// deletion an event announced).
type FollowUpper interface {
	FollowUp(r engine.Report) time.Duration
}

func followUp(w Setup, r engine.Report) time.Duration {
	if f, ok := w.(FollowUpper); ok {
		return f.FollowUp(r)
	}
	return 0
}
