package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// Allocation is one consumer's use of a node's provider, as the node page
// shows it.
type Allocation struct {
	Consumer  string
	Type      string // 1.38+: INSTANCE, MIGRATION, ...; "" when not read
	Project   string
	Resources map[string]int64
	Hold      bool // this engine's hold beside nova
}

// allocationsTimeout bounds the Placement reads one node page waits for.
const allocationsTimeout = 5 * time.Second

// pageAllocations reads the node's allocations for its page, one page at
// a time: a view costs Placement a bounded number of reads (see the
// reader the daemon sets), and views that come meanwhile are told so
// rather than queued. The reason is "" when the list was read.
func (o *Ops) pageAllocations(ctx context.Context, uuid string) ([]Allocation, string) {
	o.api.mu.Lock()
	var read func(context.Context, string) ([]Allocation, error)
	if o.api.api != nil {
		read = o.api.api.Allocations
	}
	o.api.mu.Unlock()
	if read == nil {
		return nil, "not read: the daemon has no Placement client yet"
	}
	if !o.allocBusy.TryLock() {
		return nil, "not read: another node page is reading Placement; reload in a moment"
	}
	defer o.allocBusy.Unlock()
	ctx, cancel := context.WithTimeout(ctx, allocationsTimeout)
	defer cancel()
	allocs, err := read(ctx, uuid)
	if err != nil {
		return nil, fmt.Sprintf("not read: %v", err)
	}
	return allocs, ""
}

// pageProvider reads the provider of a node the cycle did not read, for
// its page, under the same one-page-at-a-time rule as its allocations.
func (o *Ops) pageProvider(ctx context.Context, uuid string) (engine.Observed, string) {
	o.api.mu.Lock()
	var read func(context.Context, string) (engine.Observed, error)
	if o.api.api != nil {
		read = o.api.api.Provider
	}
	o.api.mu.Unlock()
	if read == nil {
		return engine.Observed{}, "not read: the daemon has no Placement client yet"
	}
	if !o.allocBusy.TryLock() {
		return engine.Observed{}, "not read: another node page is reading Placement; reload in a moment"
	}
	defer o.allocBusy.Unlock()
	ctx, cancel := context.WithTimeout(ctx, allocationsTimeout)
	defer cancel()
	obs, err := read(ctx, uuid)
	if err != nil {
		return engine.Observed{}, fmt.Sprintf("not read: %v", err)
	}
	if !obs.Exists {
		return obs, "Placement has no provider of this node"
	}
	return obs, ""
}
