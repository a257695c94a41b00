package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// The order of a node sync beside a full cycle. A full cycle spends most
// of its time listing the source (minutes at 10,000 Ironic nodes), and a
// notification must not wait for it: node syncs run while the cycle
// lists. Two rules keep that safe:
//   - the writes of two runs never interleave: each run's writing steps
//     (from its ownership record to its report) hold the write gate, and
//     its reads of the source do not;
//   - whatever observed a node later wins: a full cycle does not write a
//     provider whose node a node sync read after the cycle began, and a
//     node sync does not write at all once a full cycle that began after
//     its read has written.
//
// Observing starts at the run's start (cycle.start), before its first
// read of the source.

// order is the engine's write gate and what each kind of run observed.
type order struct {
	gate sync.Mutex
	// waiting counts node syncs waiting for the gate: a take-over leaves
	// its marker flips to the next cycle for them (takeover.go).
	waiting atomic.Int32
	// yields counts take-over cycles in a row that yielded (takeover.go).
	yields atomic.Int32

	mu sync.Mutex
	// fresh is, per provider a node sync wrote (or found right), when
	// that node sync began; entries older than the last full cycle's
	// start are dropped, so it holds at most what one cycle's wait saw.
	fresh map[string]time.Time
	// wholeAt is when the last full cycle that finished its writes began.
	wholeAt time.Time
}

// enter waits for the gate and returns what releases it. A plan writes
// nothing and runs alone: it takes no gate.
func (c *cycle) enter(whole bool) {
	if c.dry {
		return
	}
	o := &c.e.order
	if !whole {
		o.waiting.Add(1)
	}
	o.gate.Lock()
	if !whole {
		o.waiting.Add(-1)
	}
	c.leave = o.gate.Unlock
	if whole {
		o.mu.Lock()
		for u, t := range o.fresh {
			if !t.After(c.start) {
				delete(o.fresh, u)
			}
		}
		o.mu.Unlock()
	}
}

// release lets the next run write; a run that never entered has nothing
// to release.
func (c *cycle) release() {
	if c.leave != nil {
		c.leave()
		c.leave = nil
	}
}

// outrun says whether a full cycle that began after this run (a node
// sync, named nodes) has written since: then its reads are older than
// what Placement holds, and it must write nothing.
func (c *cycle) outrun() bool {
	o := &c.e.order
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.wholeAt.After(c.start)
}

// newerThanCycle says whether a node sync read provider u's node after
// this full cycle began: the cycle's view of it is older, and it leaves
// the provider as the node sync wrote it.
func (c *cycle) newerThanCycle(u string) bool {
	if !c.whole {
		return false
	}
	o := &c.e.order
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fresh[u].After(c.start)
}

// observed records what this run's writes stand on, once they are done:
// a full cycle its start; a node sync, for each provider it synced
// without error, its start.
func (c *cycle) observed(desired []Desired, whole bool) {
	if c.dry {
		return
	}
	o := &c.e.order
	o.mu.Lock()
	defer o.mu.Unlock()
	if whole {
		if c.start.After(o.wholeAt) {
			o.wholeAt = c.start
		}
		return
	}
	failed := make(map[string]bool, len(c.r.Errors))
	for _, e := range c.r.Errors {
		failed[e.Node] = true
	}
	if o.fresh == nil {
		o.fresh = map[string]time.Time{}
	}
	for _, d := range desired {
		if !failed[d.UUID] && c.start.After(o.fresh[d.UUID]) {
			o.fresh[d.UUID] = c.start
		}
	}
}
