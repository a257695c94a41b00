package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// Errors the engine wraps so that their kind is known without reading
// their text.
var (
	errOwned      = errors.New("left alone")
	errNameTaken  = errors.New("not overwritten")
	errMarkerGone = errors.New("not deleted")
)

// classify maps a provider's sync or delete error to its kinds.
func classify(err error) (OutcomeKind, ErrorKind, string) {
	switch {
	case errors.Is(err, errOwned), errors.Is(err, errNameTaken):
		return KindConflict, ErrOwned, ""
	case errors.Is(err, placement.ErrConcurrentUpdate):
		return KindConflict, ErrConflict, ""
	case errors.Is(err, errMarkerGone):
		return KindBlocked, ErrBlocked, ReasonMarkerGone
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindDeferred, ErrDeferred, ""
	}
	return KindFailed, ErrPlacement, ""
}

// outcomes collects one cycle's outcomes from the sync workers.
type outcomes struct {
	mu   sync.Mutex
	list []Outcome
}

func (c *outcomes) add(o Outcome) {
	c.mu.Lock()
	c.list = append(c.list, o)
	c.mu.Unlock()
}

// reserve makes room for n more, so a large cycle does not regrow the list.
func (c *outcomes) reserve(n int) {
	c.mu.Lock()
	c.list = slices.Grow(c.list, n)
	c.mu.Unlock()
}

func (c *outcomes) take() []Outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.list
	c.list = nil
	byNode := func(a, b Outcome) int { return strings.Compare(a.Node, b.Node) }
	if !slices.IsSortedFunc(out, byNode) { // an idle cycle's are (settledFirst)
		slices.SortStableFunc(out, byNode)
	}
	return out
}

// outcome records one node's outcome in the cycle's report and tells the
// observers, with the provider as Placement holds it after the cycle.
func (c *cycle) outcome(o Outcome, held Observed) {
	c.results.add(o)
	if (o.Kind == KindUnchanged || o.Kind == KindKept) && c.e.opts.Observer == nil {
		return // the log observer ignores these: spare 100,000 boxed events a cycle
	}
	c.e.emit(ProviderOutcome{Outcome: o, Placement: held, Plan: c.dry})
}

// synced records a provider synced (or planned) without error: before
// is what Placement held, after what it holds now.
func (c *cycle) synced(d Desired, before, after Observed, ws []Write) {
	o := Outcome{Node: d.UUID, Name: d.NodeName, Kind: kindOf(outcomeOfWrites(before, ws)),
		Reserved: string(d.Reserved), Writes: c.w.Recorded(d.UUID)}
	if len(o.Writes) > 0 || len(ws) > 0 && c.changeLists.Add(1) <= MaxChangeLists {
		o.Changes = Changes(before, ws)
	}
	c.outcome(o, after)
}

// MaxChangeLists bounds the outcomes of one cycle that list their
// changes (Outcome.Changes); the others leave them out and
// Report.ChangesOmitted counts them. A plan lists them all.
const MaxChangeLists = 1000

// failed records a provider whose sync failed.
func (c *cycle) failed(d Desired, err error) {
	kind, _, reason := classify(err)
	c.outcome(Outcome{Node: d.UUID, Name: d.NodeName, Kind: kind, Reason: reason,
		Reserved: string(d.Reserved), Message: err.Error()}, Observed{})
}

// reservedKey names a reservation reason in Report.Reserved.
func reservedKey(r baremetal.ReservedReason) string {
	if r == baremetal.Schedulable {
		return "schedulable"
	}
	return string(r)
}

func kindOf(o outcome) OutcomeKind {
	switch o {
	case created:
		return KindCreated
	case updated:
		return KindUpdated
	}
	return KindUnchanged
}

// listed records a listing's time and tells the observers.
func (c *cycle) listed(what string, n int, start time.Time, err error, nodes []hostabi.Node) {
	took := time.Since(start)
	if what != "providers" {
		c.r.PluginMS += took.Milliseconds()
	}
	c.e.emit(Listed{What: what, Count: n, Took: took, Err: err, Nodes: nodes})
}

// problem records a node the desired state left out, or partly out.
func (c *cycle) problem(p Problem) {
	if !p.Quarantined() {
		c.fail(ErrInvalidData, strings.ToLower(p.NodeUUID), p.String())
		return
	}
	c.r.Quarantined++
	c.fail(ErrQuarantined, strings.ToLower(p.NodeUUID), p.String()) // its outcome: quarantine (doubt.go)
}

// deferred records the providers a stopping cycle did not sync.
func (c *cycle) deferred(ds []Desired, why string) {
	for _, d := range ds {
		c.outcome(Outcome{Node: d.UUID, Name: d.NodeName, Kind: KindDeferred, Reserved: string(d.Reserved),
			Message: "not synced: " + why}, Observed{})
	}
}

// kept records unlisted providers left in place, and why.
func (c *cycle) kept(uuids []string, reason, msg string) {
	for _, u := range uuids {
		c.outcome(Outcome{Node: u, Kind: KindKept, Reason: reason, Message: msg}, Observed{})
	}
}

// blockedOutcome records a provider proven gone twice and not deleted.
func (c *cycle) blockedOutcome(uuid, code, msg string) {
	c.outcome(Outcome{Node: uuid, Kind: KindBlocked, Reason: code, Message: msg, Proof: 2, ProofsNeeded: 2}, Observed{})
}

// reaped records a proven deletion made (or planned), or its failure.
func (c *cycle) reaped(uuid string, err error) {
	o := Outcome{Node: uuid, Kind: KindDeleted, Proof: 2, ProofsNeeded: 2, Writes: c.w.Recorded(uuid)}
	o.Changes = Changes(Observed{}, o.Writes)
	if err != nil {
		o.Kind, _, o.Reason = classify(err)
		o.Message = err.Error()
	}
	c.outcome(o, Observed{})
}
