package events

import (
	"sync"
	"time"
)

// Cooldown spaces the reads of one node. A change in flight sends several
// notifications (a provision change's start, progress and end), which on a
// loaded machine land in different windows: each would cost a read of the
// node. With a cooldown, a node read less than every ago is not read again
// at once but when every has passed, once for all that came meanwhile. The
// first notification of a quiet node is read at once, so a change that
// comes alone is never delayed, and the reads of one node cost at most one
// per every. Times come from the caller's clock.
type Cooldown struct {
	mu      sync.Mutex
	every   time.Duration
	last    map[string]time.Time // nodes read within every, and when
	pending map[string]time.Time // nodes deferred, and when they are due
	wake    chan struct{}        // signalled (non-blocking) when one is deferred
}

// NewCooldown spaces reads by every; 0 defers nothing.
func NewCooldown(every time.Duration) *Cooldown {
	return &Cooldown{every: every, last: map[string]time.Time{}, pending: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// Split returns the nodes to read now, marking them read at now, and
// the others (read less than every ago, or already deferred), which wait
// until Due hands them out.
func (c *Cooldown) Split(now time.Time, uuids []string) (read, deferred []string) {
	if c.every <= 0 {
		return uuids, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(now)
	for _, u := range uuids {
		if _, ok := c.pending[u]; ok {
			deferred = append(deferred, u)
			continue
		}
		if at, ok := c.last[u]; ok {
			c.pending[u] = at.Add(c.every)
			deferred = append(deferred, u)
			continue
		}
		c.last[u] = now
		read = append(read, u)
	}
	if len(deferred) > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return read, deferred
}

// Due takes the deferred nodes due at now, marking them read at now.
func (c *Cooldown) Due(now time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for u, due := range c.pending {
		if !due.After(now) {
			out = append(out, u)
			delete(c.pending, u)
			c.last[u] = now
		}
	}
	return out
}

// Next is when the earliest deferred node is due; ok is false when none
// is deferred.
func (c *Cooldown) Next() (next time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, due := range c.pending {
		if !ok || due.Before(next) {
			next, ok = due, true
		}
	}
	return next, ok
}

// Wake is signalled when a node is deferred: a waiter on Next should look
// again.
func (c *Cooldown) Wake() <-chan struct{} { return c.wake }

// forget drops the nodes read longer than every ago, so that the memory
// held is the nodes of the last every, not every node ever read.
func (c *Cooldown) forget(now time.Time) {
	for u, at := range c.last {
		if now.Sub(at) >= c.every {
			if _, waiting := c.pending[u]; !waiting {
				delete(c.last, u)
			}
		}
	}
}
