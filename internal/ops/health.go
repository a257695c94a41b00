package ops

import (
	"fmt"
	"sync"
	"time"
)

// health decides /readyz and /healthz from the cycles seen.
//
// Ready (it can do its job now): a cycle has succeeded (outcome ok or
// partial) and the newest finished cycle did not fail; one good cycle
// makes it ready again. Live (the process and its loop): the loop
// started or finished a cycle, or a cycle synced a provider, within
// unhealthyAfter intervals plus one; an outage of Ironic or Placement
// fails cycles fast and so keeps it live. Healthy: one succeeded within unhealthyAfter intervals (the
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
	lastBeat       time.Time // the loop's last cycle start or end
	failedInRow    int       // cycles failed since the last success
	lastFailure    time.Time
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
	h.running, h.lastProgress, h.lastBeat = true, at, at
}

func (h *health) progressed(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastProgress = at
}

func (h *health) cycleDone(o Outcome, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running, h.lastBeat = false, at
	if o != Failed {
		h.lastSuccess, h.failedInRow = at, 0
		return
	}
	h.failedInRow++
	h.lastFailure = at
}

func (h *health) ready() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastSuccess.IsZero() {
		return false, "no successful cycle yet"
	}
	if h.failedInRow > 0 {
		return false, fmt.Sprintf("not ready: the last %d cycle(s) failed, the newest at %s; last successful cycle %s",
			h.failedInRow, h.lastFailure.UTC().Format(time.RFC3339), h.lastSuccess.UTC().Format(time.RFC3339))
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

func (h *health) live(now time.Time) (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	window := time.Duration(h.unhealthyAfter+1) * h.interval
	ref, what := h.started, "start"
	if h.lastBeat.After(ref) {
		ref, what = h.lastBeat, "cycle started or ended"
	}
	if h.running && h.lastProgress.After(ref) {
		ref, what = h.lastProgress, "provider synced"
	}
	if age := now.Sub(ref); h.interval <= 0 || age <= window {
		return true, fmt.Sprintf("live: %s %s ago", what, age.Round(time.Second))
	}
	return false, fmt.Sprintf("not live: the loop did nothing for %s (last: %s; limit: %d intervals of %s)",
		now.Sub(ref).Round(time.Second), what, h.unhealthyAfter+1, h.interval)
}
