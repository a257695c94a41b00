package ops

import (
	"sync"
	"time"
)

// Observe mode's drift on the status page (engine.mode = "observe",
// docs/OBSERVE.md): the daemon keeps it (by node and kind, since when);
// the page asks for it at each request.

// ObservedDrift is one drift observe mode sees: a node's provider differs
// from what the rules would write, in Kind, since Since.
type ObservedDrift struct {
	Node, Kind string
	Since      time.Time
}

// ObserveState is the page's view of observe mode's drift: the oldest
// first, at most maxObservedRows of Total.
type ObserveState struct {
	Drift []ObservedDrift
	Total int
}

// maxObservedRows bounds the page's drift table.
const maxObservedRows = 50

type observing struct {
	mu   sync.Mutex
	list func() []ObservedDrift
}

// WatchDrift makes the page show observe mode's drift: list, called at
// each request, returns it oldest first. nil: not in observe mode.
func (o *Ops) WatchDrift(list func() []ObservedDrift) {
	o.observing.mu.Lock()
	o.observing.list = list
	o.observing.mu.Unlock()
}

func (o *Ops) observeState() *ObserveState {
	o.observing.mu.Lock()
	f := o.observing.list
	o.observing.mu.Unlock()
	if f == nil {
		return nil
	}
	all := f()
	return &ObserveState{Drift: all[:min(len(all), maxObservedRows)], Total: len(all)}
}
