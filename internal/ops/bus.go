package ops

import (
	"fmt"
	"sync"
	"time"
)

// BusState is the event source's condition ([events], internal/events),
// for the status page and /readyz.
type BusState struct {
	Connected  bool
	Since      time.Time // of the last change of Connected
	LastError  string
	Connects   int
	Queue      string
	Syncs      int       // node syncs run
	LastSync   time.Time // end of the last node sync
	LastSyncOK bool
	Fallbacks  int    // full cycles brought forward
	LastWhy    string // why the last one was
}

// bus holds the function that reads the source's state; nil without
// events.
type bus struct {
	mu    sync.Mutex
	state func() BusState
}

// WatchBus makes the page and /readyz show the event source: state is
// called at each request. nil: no events configured.
func (o *Ops) WatchBus(state func() BusState) {
	o.bus.mu.Lock()
	o.bus.state = state
	o.bus.mu.Unlock()
}

func (o *Ops) busState() *BusState {
	o.bus.mu.Lock()
	f := o.bus.state
	o.bus.mu.Unlock()
	if f == nil {
		return nil
	}
	s := f()
	return &s
}

// busReason adds the bus's state to a readiness reason. A bus that is
// down does not make the engine unready: full cycles keep Placement
// right at engine.interval; the reason says so, for the operator.
func (o *Ops) busReason(why string) string {
	b := o.busState()
	if b == nil {
		return why
	}
	if b.Connected {
		return why + "; events: connected"
	}
	return fmt.Sprintf("%s; events: disconnected since %s (full cycles every engine.interval meanwhile)",
		why, b.Since.UTC().Format(time.RFC3339))
}

// nodesSynced makes the rows a node sync built (its ProviderOutcome
// events, between cycles) the table's rows for those nodes, so the page
// shows a node sync's result without waiting for the next full cycle.
func (t *nodeTable) nodesSynced() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rows == nil {
		t.rows = map[string]*NodeRow{}
	}
	for u, row := range t.building {
		t.rows[u] = row
	}
	t.building = nil
}
