package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// A pause for one provider (engine pause NODE --for 2h --reason "..."):
// an operator's temporary fix in Placement (a raised allocation ratio, a
// node un-reserved) is not reverted. While paused, the writer the
// ownership record hands out refuses every write to the provider
// (record.ErrPaused), whatever step asks; a cycle reports it as paused
// and never deletes it. The pause is in the ownership record — the state
// file and, with [coord], the shared record — so it survives a restart
// and a take-over; it holds until engine resume, and past the time the
// operator meant to resume it is reported overdue (metric, alert).

// MaxPauseReason bounds a pause's reason.
const MaxPauseReason = 200

// ErrNotManaged: a pause is only for a provider this engine records.
var ErrNotManaged = errors.New("not a provider this engine manages")

// ErrBadPause: what was asked cannot be a pause (not a uuid, a resume
// time not in the future, a reason too long, nothing to resume).
var ErrBadPause = errors.New("refused")

// Pause pauses uuid's provider until resumed; until is when the operator
// means to resume. It is in the record (saved, and stored in the shared
// record with [coord]) before it returns. Not during a cycle.
func (e *Engine) Pause(ctx context.Context, uuid string, until time.Time, reason string) error {
	uuid = strings.ToLower(uuid)
	switch {
	case !hostabi.ValidUUID(uuid):
		return fmt.Errorf("pause: %w: %q is not a node uuid", ErrBadPause, uuid)
	case !until.After(e.now()):
		return fmt.Errorf("pause: %w: the resume time %s is not in the future", ErrBadPause, until.Format(time.RFC3339))
	case len(reason) > MaxPauseReason:
		return fmt.Errorf("pause: %w: the reason is %d bytes, more than %d", ErrBadPause, len(reason), MaxPauseReason)
	}
	if _, ok := e.state.get(uuid); !ok {
		return fmt.Errorf("pause %s: %w", uuid, ErrNotManaged)
	}
	e.state.update(uuid, func(k *known) { k.PausedUntil, k.PauseReason = until.UTC(), reason })
	return e.persist(ctx)
}

// Resume lifts uuid's pause: the next cycle applies the rules again.
func (e *Engine) Resume(ctx context.Context, uuid string) error {
	uuid = strings.ToLower(uuid)
	k, ok := e.state.get(uuid)
	if !ok || k.PausedUntil.IsZero() {
		return fmt.Errorf("resume %s: %w: not paused", uuid, ErrBadPause)
	}
	e.state.update(uuid, func(k *known) { k.PausedUntil, k.PauseReason = time.Time{}, "" })
	return e.persist(ctx)
}

// persist saves the record and stores it in the shared record.
func (e *Engine) persist(ctx context.Context) error {
	if err := e.rec.Save(); err != nil {
		return fmt.Errorf("record the pause: %w", err)
	}
	if err := e.rec.Flush(ctx); err != nil {
		return fmt.Errorf("store the pause in the shared record: %w", err)
	}
	return nil
}

// pause is uuid's pause: ok, and until, when it is paused.
func (c *cycle) pause(uuid string) (until time.Time, reason string, ok bool) {
	if !c.state.anyPaused() {
		return time.Time{}, "", false
	}
	k, _ := c.state.get(uuid)
	return k.PausedUntil, k.PauseReason, !k.PausedUntil.IsZero()
}

// leavePaused records d's provider as paused, if it is: then the sync
// writes nothing to it.
func (c *cycle) leavePaused(d Desired) bool {
	until, reason, ok := c.pause(d.UUID)
	if !ok {
		return false
	}
	msg := "paused until " + until.Format(time.RFC3339)
	if reason != "" {
		msg += ": " + reason
	}
	if c.e.now().After(until) {
		msg += " (overdue: engine resume to apply the rules again)"
	}
	c.outcome(Outcome{Node: d.UUID, Name: d.NodeName, Kind: KindPaused, Message: msg}, Observed{})
	return true
}

// countPauses sets the report's counts of paused and overdue providers.
func (c *cycle) countPauses() {
	if !c.state.anyPaused() {
		return
	}
	now := c.e.now()
	c.r.Paused, c.r.PausesOverdue = c.state.pauses(now)
}

// anyPaused says whether some provider is paused.
func (s *State) anyPaused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused > 0
}

// pauses counts the paused providers, and those overdue at now.
func (s *State) pauses(now time.Time) (paused, overdue int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.providers.all() {
		if !k.PausedUntil.IsZero() {
			paused++
			if now.After(k.PausedUntil) {
				overdue++
			}
		}
	}
	return paused, overdue
}
