package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// ReportSchema is the version of Report's JSON form (engine once --json,
// engine plan --json), documented in docs/REPORT.md. It changes only
// when a field changes meaning or type; new fields do not bump it.
const ReportSchema = 2

// OutcomeKind says what a cycle did with one node's provider.
type OutcomeKind string

// The outcome kinds (docs/REPORT.md).
const (
	KindCreated         OutcomeKind = "created"
	KindUpdated         OutcomeKind = "updated"
	KindUnchanged       OutcomeKind = "unchanged"
	KindQuarantined     OutcomeKind = "quarantined"      // bad data from the source: not written; Reason says why
	KindConflict        OutcomeKind = "conflict"         // another writer: retries exhausted, or another owner's provider
	KindDeferred        OutcomeKind = "deferred"         // not synced this cycle (stopping)
	KindFailed          OutcomeKind = "failed"           // a Placement error
	KindDeleted         OutcomeKind = "deleted"          // node proven gone twice: provider deleted
	KindPendingDeletion OutcomeKind = "pending_deletion" // node proven gone; waiting for the next proof
	KindBlocked         OutcomeKind = "blocked"          // proven gone but not deleted; Reason says why
	KindKept            OutcomeKind = "kept"             // unlisted, not proven gone: provider kept; Reason says why
)

// Reason codes of quarantined, blocked and kept outcomes.
const (
	ReasonNoProofCapability = "no_proof_capability" // the plugin cannot prove deletion
	ReasonNodePresent       = "node_present"        // the plugin says the node exists (out of scope?)
	ReasonProofUnknown      = "proof_unknown"       // the plugin said neither gone nor present
	ReasonProofFailed       = "proof_failed"        // confirm_deleted failed
	ReasonDeleteLimit       = "delete_limit"        // too many at once (engine.delete_limit)
	ReasonAllocations       = "allocations"         // allocations remain: reserved instead
	ReasonRefused           = "placement_refused"   // Placement refused the delete (a child provider...): reserved instead
	ReasonMarkerGone        = "owner_marker_gone"   // no longer carries our owner trait
	ReasonGrace             = "delete_grace"        // second proof came before delete_grace passed
	ReasonOtherPlugin       = "other_plugin"        // written from another plugin, which alone may prove its node gone
)

// Outcome is what one cycle did (or, in a plan, would do) with one node.
type Outcome struct {
	Node string      `json:"node"`
	Name string      `json:"name,omitempty"` // the node's name at the source
	Kind OutcomeKind `json:"kind"`
	// Reason is a code: a quarantine's (Problem.Code), a blocked or kept
	// deletion's (Reason* constants).
	Reason string `json:"reason,omitempty"`
	// Reserved is the desired provider's reservation reason ("" when
	// schedulable or when no provider is desired).
	Reserved string `json:"reserved,omitempty"`
	Message  string `json:"message,omitempty"`
	// Proof counts the consecutive proofs of deletion so far, of
	// ProofsNeeded (pending_deletion, deleted, blocked).
	Proof        int `json:"proof,omitempty"`
	ProofsNeeded int `json:"proofs_needed,omitempty"`
	// Changes lists what the writes change, for reading; Writes are the
	// writes themselves (plans only).
	Changes []Change `json:"changes,omitempty"`
	Writes  []Write  `json:"writes,omitempty"`
}

// Change is one difference between a provider in Placement and its
// desired state. Field is "provider" (created), "class" (an inventory
// class added or removed), an inventory field ("total", "reserved",
// "min_unit", "max_unit", "step_size", "allocation_ratio"), "traits" or
// "aggregates".
type Change struct {
	Field   string   `json:"field"`
	Class   string   `json:"class,omitempty"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// ErrorKind classifies a cycle error.
type ErrorKind string

// The error kinds (docs/REPORT.md).
const (
	ErrListing      ErrorKind = "listing"      // a listing failed: the cycle wrote nothing
	ErrQuarantined  ErrorKind = "quarantined"  // a node's data is unusable: not written
	ErrInvalidData  ErrorKind = "invalid_data" // part of a node's data left out; the rest written
	ErrConflict     ErrorKind = "conflict"     // generation conflicts: gave up for this cycle
	ErrOwned        ErrorKind = "owned"        // the provider or its name belongs to another
	ErrDeferred     ErrorKind = "deferred"     // stopping: providers not synced
	ErrPlacement    ErrorKind = "placement"    // Placement refused or failed a request
	ErrPlugin       ErrorKind = "plugin"       // a plugin call failed
	ErrBlocked      ErrorKind = "blocked"      // a proven deletion not made
	ErrCoordination ErrorKind = "coordination" // the engines' coordination (etcd) held the cycle back
	ErrState        ErrorKind = "state"        // the ownership record could not be written: nothing written
)

// Error is one failure of a cycle. Node is empty when it concerns the
// whole cycle.
type Error struct {
	Node    string    `json:"node,omitempty"`
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

// String is the message, for humans.
func (e Error) String() string { return e.Message }

// ErrorMessages lists the report's error messages.
func (r Report) ErrorMessages() []string {
	out := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		out[i] = e.Message
	}
	return out
}

func (r *Report) fail(kind ErrorKind, node, msg string) {
	r.Errors = append(r.Errors, Error{Node: node, Kind: kind, Message: msg})
}

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
	slices.SortStableFunc(out, func(a, b Outcome) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// outcome records one node's outcome in the cycle's report and tells the
// observers, with the provider as Placement holds it after the cycle.
func (e *Engine) outcome(o Outcome, held Observed) {
	e.results.add(o)
	if (o.Kind == KindUnchanged || o.Kind == KindKept) && e.opts.Observer == nil {
		return // the log observer ignores these: spare 100,000 boxed events a cycle
	}
	e.emit(ProviderOutcome{Outcome: o, Placement: held, Dry: e.dry})
}

// MaxChangeLists bounds the outcomes of one cycle that list their
// changes (Outcome.Changes); the others leave them out and
// Report.ChangesOmitted counts them. A plan lists them all.
const MaxChangeLists = 1000

// synced records a provider synced (or planned) without error: before
// is what Placement held, after what it holds now.
func (e *Engine) synced(d Desired, before, after Observed, ws []Write, dry bool) {
	o := Outcome{Node: d.UUID, Name: d.NodeName, Kind: kindOf(planned(before, ws)), Reserved: string(d.Reserved)}
	if dry {
		o.Writes, o.Changes = ws, Changes(before, ws)
	} else if len(ws) > 0 && e.changeLists.Add(1) <= MaxChangeLists {
		o.Changes = Changes(before, ws)
	}
	e.outcome(o, after)
}

// failed records a provider whose sync failed.
func (e *Engine) failed(d Desired, err error) {
	kind, _, reason := classify(err)
	e.outcome(Outcome{Node: d.UUID, Name: d.NodeName, Kind: kind, Reason: reason,
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

// Changes describes what ws change on a provider observed as o.
func Changes(o Observed, ws []Write) []Change {
	var out []Change
	for _, w := range ws {
		switch w.Op {
		case OpCreate:
			out = append(out, Change{Field: "provider", To: w.Name})
		case OpInventory:
			out = append(out, inventoryChanges(o.Inventory, w.Inventory)...)
		case OpTraits:
			if c, ok := setChange("traits", o.Traits, w.Traits); ok {
				out = append(out, c)
			}
		case OpAggregates:
			if c, ok := setChange("aggregates", o.Aggregates, w.Aggregates); ok {
				out = append(out, c)
			}
		case OpDelete:
			out = append(out, Change{Field: "provider", From: w.UUID})
		}
	}
	return out
}

func inventoryChanges(from, to map[string]placement.Inventory) []Change {
	var out []Change
	for _, rc := range slices.Sorted(maps.Keys(from)) {
		if _, ok := to[rc]; !ok {
			out = append(out, Change{Field: "class", Removed: []string{rc}})
		}
	}
	for _, rc := range slices.Sorted(maps.Keys(to)) {
		t := to[rc]
		f, ok := from[rc]
		if !ok {
			out = append(out, Change{Field: "class", Class: rc, Added: []string{rc},
				To: fmt.Sprintf("total %d reserved %d", t.Total, t.Reserved)})
			continue
		}
		num := func(field string, a, b int64) {
			if a != b {
				out = append(out, Change{Field: field, Class: rc, From: strconv.FormatInt(a, 10), To: strconv.FormatInt(b, 10)})
			}
		}
		num("total", f.Total, t.Total)
		num("reserved", f.Reserved, t.Reserved)
		num("min_unit", f.MinUnit, t.MinUnit)
		num("max_unit", f.MaxUnit, t.MaxUnit)
		num("step_size", f.StepSize, t.StepSize)
		if f.AllocationRatio != t.AllocationRatio {
			out = append(out, Change{Field: "allocation_ratio", Class: rc,
				From: strconv.FormatFloat(f.AllocationRatio, 'g', -1, 64), To: strconv.FormatFloat(t.AllocationRatio, 'g', -1, 64)})
		}
	}
	return out
}

func setChange(field string, from, to []string) (Change, bool) {
	c := Change{Field: field}
	for _, x := range to {
		if !slices.Contains(from, x) {
			c.Added = append(c.Added, x)
		}
	}
	for _, x := range from {
		if !slices.Contains(to, x) {
			c.Removed = append(c.Removed, x)
		}
	}
	return c, len(c.Added)+len(c.Removed) > 0
}

// listed records a listing's time and tells the observers.
func (e *Engine) listed(r *Report, what string, n int, start time.Time, err error, nodes []hostabi.Node) {
	took := time.Since(start)
	if what != "providers" {
		r.PluginMS += took.Milliseconds()
	}
	e.emit(Listed{What: what, Count: n, Took: took, Err: err, Nodes: nodes})
}

// placementTime sets the time of the Placement phases begun at start.
func (r *Report) placementTime(start time.Time, proofs time.Duration) {
	r.PlacementMS = (time.Since(start) - proofs).Milliseconds()
}

// problem records a node the desired state left out, or partly out.
func (e *Engine) problem(r *Report, p Problem) {
	if !p.Quarantined() {
		r.fail(ErrInvalidData, strings.ToLower(p.NodeUUID), p.String())
		return
	}
	r.Quarantined++
	r.fail(ErrQuarantined, strings.ToLower(p.NodeUUID), p.String())
	e.outcome(Outcome{Node: strings.ToLower(p.NodeUUID), Name: p.NodeName, Kind: KindQuarantined,
		Reason: p.Code, Message: p.Reason}, Observed{})
}

// deferred records the providers a stopping cycle did not sync.
func (e *Engine) deferred(ds []Desired) {
	for _, d := range ds {
		e.outcome(Outcome{Node: d.UUID, Name: d.NodeName, Kind: KindDeferred, Reserved: string(d.Reserved),
			Message: "not synced: the engine is stopping"}, Observed{})
	}
}

// kept records unlisted providers left in place, and why.
func (e *Engine) kept(uuids []string, reason, msg string) {
	for _, u := range uuids {
		e.outcome(Outcome{Node: u, Kind: KindKept, Reason: reason, Message: msg}, Observed{})
	}
}

// proofCount says which proof this cycle's is, for each uuid proven
// deleted: 2 when the previous cycle proved it too, else 1. Read before
// provenGone records this cycle's proofs.
func (e *Engine) proofCount(deleted []string, round int64) map[string]int {
	out := make(map[string]int, len(deleted))
	for _, u := range deleted {
		k, _ := e.state.get(u)
		out[u] = 1
		if !k.GoneSince.IsZero() && k.ProofRound == round-1 {
			out[u] = 2
		}
	}
	return out
}

// proofOutcomes records the unlisted providers not ready for deletion:
// pending their next proof, or kept.
func (e *Engine) proofOutcomes(asked, deleted, present, ready []string, proofs map[string]int) {
	isReady, isDeleted, isPresent := setOf(ready), setOf(deleted), setOf(present)
	e.results.reserve(len(asked))
	for _, u := range asked {
		o := Outcome{Node: u, Kind: KindKept, ProofsNeeded: 2, Proof: proofs[u]}
		switch {
		case isReady[u]:
			continue // deleted, blocked or failed: recorded by the caller
		case isDeleted[u] && proofs[u] >= 2:
			o.Kind, o.Reason, o.Message = KindPendingDeletion, ReasonGrace, "proven deleted twice; waiting for engine.delete_grace"
		case isDeleted[u]:
			o.Kind, o.Message = KindPendingDeletion, "proven deleted once; the next cycle's proof deletes it"
		case isPresent[u]:
			o.Reason, o.Message, o.ProofsNeeded = ReasonNodePresent, "not listed, but the plugin says the node exists", 0
		default:
			o.Reason, o.Message, o.ProofsNeeded = ReasonProofUnknown, "not listed; the plugin did not say", 0
		}
		e.outcome(o, Observed{})
	}
}

// msgAllocations is deleteOne's reason for a provider still in use.
const msgAllocations = "the provider has allocations"

// blockedCode is the reason code of a deletion block's reason.
func blockedCode(reason string) string {
	switch {
	case reason == msgAllocations:
		return ReasonAllocations
	case strings.Contains(reason, "engine.delete_limit"):
		return ReasonDeleteLimit
	}
	return ReasonRefused
}

// blockedOutcome records a provider proven gone twice and not deleted.
func (e *Engine) blockedOutcome(uuid, code, msg string) {
	e.outcome(Outcome{Node: uuid, Kind: KindBlocked, Reason: code, Message: msg, Proof: 2, ProofsNeeded: 2}, Observed{})
}

// reaped records a proven deletion made (or planned), or its failure.
func (e *Engine) reaped(uuid string, err error, dry bool) {
	o := Outcome{Node: uuid, Kind: KindDeleted, Proof: 2, ProofsNeeded: 2}
	if dry {
		o.Writes = []Write{{Op: OpDelete, UUID: uuid}}
		o.Changes = Changes(Observed{}, o.Writes)
	}
	if err != nil {
		o.Kind, _, o.Reason = classify(err)
		o.Message = err.Error()
	}
	e.outcome(o, Observed{})
}

// setOf is xs as a set, for lookups inside a loop over all providers.
func setOf(xs []string) map[string]bool {
	out := make(map[string]bool, len(xs))
	for _, x := range xs {
		out[x] = true
	}
	return out
}
