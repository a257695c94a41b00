package engine

import "fmt"

// The report of a cycle or a plan: its JSON form is versioned
// (ReportSchema) and documented in docs/REPORT.md. Every type of it is
// here; outcome.go records a cycle's outcomes into it.

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
	KindPaused          OutcomeKind = "paused"           // an operator paused it (engine pause): not written
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

// Report says what one cycle did. Errors holds one entry per failure; a
// cycle with no errors left Placement matching the desired state.
// Outcomes says, node by node, what the cycle did. The JSON form is
// versioned (ReportSchema) and documented in docs/REPORT.md.
type Report struct {
	Schema      int `json:"schema_version"`
	Nodes       int `json:"nodes"`
	Instances   int `json:"instances"`
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Unchanged   int `json:"unchanged"`
	Deleted     int `json:"deleted"`
	Quarantined int `json:"quarantined"`
	Conflicts   int `json:"conflicts"`
	// Failed counts providers whose sync failed this cycle.
	Failed int     `json:"failed"`
	Errors []Error `json:"errors"`
	// Warnings are conditions that do not fail the cycle but leave
	// Placement short of the desired state, e.g. traits it does not know.
	Warnings []string `json:"warnings,omitempty"`
	// Blocked counts providers of nodes proven gone that could not be
	// deleted this cycle; each is fully reserved instead (deletion.go).
	Blocked int `json:"deletions_blocked,omitempty"`
	// Reserved counts desired providers by ReservedReason, "schedulable"
	// for those with none.
	Reserved          map[string]int `json:"reserved_by_reason,omitempty"`
	PlacementRequests int64          `json:"placement_requests"`
	DurationMS        int64          `json:"duration_ms"`
	// PluginMS is the time spent in plugin calls, PlacementMS in the
	// phases that talk to Placement (the provider listing, the syncs and
	// the deletions, less the plugin's proofs); the rest is the engine's.
	PluginMS    int64 `json:"plugin_ms"`
	PlacementMS int64 `json:"placement_ms"`
	// Writes are a plan's writes (Engine.Plan), each node's together.
	Writes   []Write   `json:"writes,omitempty"`
	Outcomes []Outcome `json:"outcomes"`

	// ForeignRewrites counts providers whose values another writer changed
	// since the engine last saw them (foreign.go); Nova is beside-nova mode.
	ForeignRewrites int `json:"foreign_rewrites"`
	// LeftToNodeSyncs counts providers a full cycle did not write because
	// a node sync read their node after the cycle began (engine/order.go).
	LeftToNodeSyncs int `json:"left_to_node_syncs,omitempty"`
	// TakeOverLeft counts providers to take over that this cycle left to
	// the next, which it asks for at once: they only needed their owner
	// marker flipped, and a node sync was waiting (takeover.go).
	TakeOverLeft int `json:"takeover_left,omitempty"`
	// Paused counts the providers an operator paused (engine pause), and
	// PausesOverdue those past the time the operator meant to resume.
	Paused        int `json:"paused,omitempty"`
	PausesOverdue int `json:"pauses_overdue,omitempty"`
	// ChangesOmitted counts outcomes past the first MaxChangeLists of a
	// cycle (not a plan) whose changes were left out: a cold run creating
	// 100,000 providers kept 43 MB of them.
	ChangesOmitted int64       `json:"changes_omitted,omitempty"`
	Nova           *NovaReport `json:"nova,omitempty"`
}

// maxErrorLines bounds Report.Errors: past it, one line counts the rest,
// so a plugin's million bad nodes make a report of a few KiB.
const maxErrorLines = 50

// capErrors keeps the first maxErrorLines errors, each cut to 1 KiB.
func (r *Report) capErrors() {
	if n := len(r.Errors); n > maxErrorLines {
		more := Error{Kind: r.Errors[maxErrorLines].Kind, Message: fmt.Sprintf("... and %d more errors", n-maxErrorLines)}
		r.Errors = append(r.Errors[:maxErrorLines:maxErrorLines], more)
	}
	for i, e := range r.Errors {
		if len(e.Message) > 1024 {
			r.Errors[i].Message = fmt.Sprintf("%s... (%d bytes)", e.Message[:1024], len(e.Message))
		}
	}
}

// NovaReport is what beside-nova mode did in one cycle.
type NovaReport struct {
	// Held counts the holds in place after the cycle.
	Held     int `json:"held"`
	Placed   int `json:"placed"`
	Released int `json:"released"`
	// Occupied counts nodes that wanted a hold but whose unit another
	// consumer (an instance) already uses: unschedulable all the same.
	Occupied int `json:"occupied,omitempty"`
	// Scanned counts hold consumers read to rebuild the book from
	// Placement (usage that did not add up, or no book in the record).
	Scanned int  `json:"scanned,omitempty"`
	skip    bool // the book could not be checked: no hold written this cycle
}
