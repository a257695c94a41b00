package ops

import (
	"fmt"
	"sync"
	"time"
)

// health decides /readyz and /healthz from the cycles seen.
//
// Ready: a cycle has succeeded (outcome ok or partial) since the process
// started. Healthy: one succeeded within unhealthyAfter intervals (the
// process start counts as one, so a fresh daemon is healthy), or — before
// the first success only — a cycle in progress finished a provider within
// that window: a cold start of thousands of providers is slow, not stuck.
type health struct {
	mu             sync.Mutex
	started        time.Time
	interval       time.Duration
	unhealthyAfter int
	lastSuccess    time.Time // zero: none yet
	running        bool
	lastProgress   time.Time
}

func (h *health) configure(interval time.Duration, unhealthyAfter int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.interval, h.unhealthyAfter = interval, max(unhealthyAfter, 1)
}

// every is the interval between cycles.
func (h *health) every() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.interval
}

func (h *health) cycleStarted(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running, h.lastProgress = true, at
}

func (h *health) progressed(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastProgress = at
}

func (h *health) cycleDone(o Outcome, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running = false
	if o != Failed {
		h.lastSuccess = at
	}
}

func (h *health) ready() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastSuccess.IsZero() {
		return false, "no successful cycle yet"
	}
	return true, "ready: last successful cycle " + h.lastSuccess.UTC().Format(time.RFC3339)
}

func (h *health) healthy(now time.Time) (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	window := time.Duration(h.unhealthyAfter) * h.interval
	ref, what := h.lastSuccess, "last successful cycle"
	if ref.IsZero() {
		ref, what = h.started, "start"
	}
	if age := now.Sub(ref); age <= window {
		return true, fmt.Sprintf("ok: %s %s ago", what, age.Round(time.Second))
	}
	if h.lastSuccess.IsZero() && h.running && now.Sub(h.lastProgress) <= window {
		return true, fmt.Sprintf("ok: first cycle in progress, last provider synced %s ago",
			now.Sub(h.lastProgress).Round(time.Second))
	}
	return false, fmt.Sprintf("unhealthy: no successful cycle for %s (limit: %d intervals of %s, server.unhealthy_after)",
		now.Sub(ref).Round(time.Second), h.unhealthyAfter, h.interval)
}
