package engine

import (
	"log/slog"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// Observer receives the engine's events as they happen. Logs, metrics,
// the status page and tests read these, never the text of a log line.
// Observe is called from the cycle's goroutines, possibly concurrently;
// it must return quickly and must not call back into the engine.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(e Event) { f(e) }

// Event is one of the types below; the set is closed.
type Event interface{ event() }

// CycleStarted opens a cycle. Plan says it is a plan (Engine.Plan),
// which writes nothing; Observe that it is observe mode's cycle
// (Engine.Observe): a plan that is the daemon's cycle, whose outcomes
// the status page shows as a cycle's.
type CycleStarted struct {
	At      time.Time
	Plan    bool
	Observe bool
}

// Listed reports one listing: What is "nodes", "instances" (the plugin)
// or "providers" (Placement). Nodes is set for "nodes" and is shared with
// the engine: an observer may keep it but must not modify it.
type Listed struct {
	What  string
	Count int
	Took  time.Duration
	Err   error
	Nodes []hostabi.Node
}

// ProviderWritten is one write Placement accepted, with the generations
// around it. RequestID is the id Placement gave the write's answer,
// GlobalRequestID the cycle's: both name the write in Placement's log.
type ProviderWritten struct {
	Node             string
	Name             string // the node's at the source; "" if unknown
	Op               Op
	GenerationBefore string
	GenerationAfter  string
	RequestID        string
	GlobalRequestID  string
}

// ProviderOutcome is what the cycle did with one node or provider.
// Placement is the provider as Placement holds it after the sync (zero
// when not read: quarantined, failed, deleted).
type ProviderOutcome struct {
	Outcome   Outcome
	Placement Observed
	Plan      bool // a plan: nothing was written
}

// CycleFinished closes a cycle with its report.
type CycleFinished struct {
	Report Report
}

func (CycleStarted) event()    {}
func (Listed) event()          {}
func (ProviderWritten) event() {}
func (ProviderOutcome) event() {}
func (CycleFinished) event()   {}

// Observers fans events out to several observers, in order; nil ones are
// skipped.
type Observers []Observer

// Observe passes e to each observer.
func (os Observers) Observe(e Event) {
	for _, o := range os {
		if o != nil {
			o.Observe(e)
		}
	}
}

// LogObserver turns events into the engine's log lines: one Info line
// per write and per deletion, a Warn line per quarantined node. It is
// the only place those messages are written; nothing parses them.
func LogObserver(log *slog.Logger) Observer {
	return ObserverFunc(func(e Event) {
		switch e := e.(type) {
		case ProviderWritten:
			log.Info("provider written", NodeAttrs(e.Node, e.Name, "op", e.Op,
				"generation_before", e.GenerationBefore, "generation_after", e.GenerationAfter,
				"request_id", e.RequestID, "global_request_id", e.GlobalRequestID)...)
		case ProviderOutcome:
			if e.Plan {
				return
			}
			switch e.Outcome.Kind {
			case KindDeleted:
				log.Info("provider deleted: node proven gone", NodeAttrs(e.Outcome.Node, e.Outcome.Name)...)
			case KindPendingDeletion:
				log.Info("node proven deleted; provider kept until the next proof", NodeAttrs(e.Outcome.Node, e.Outcome.Name,
					"proof", e.Outcome.Proof, "of", e.Outcome.ProofsNeeded)...)
			}
		}
	})
}

// emit passes e to the engine's observers.
func (e *Engine) emit(ev Event) { e.obs.Observe(ev) }

// NodesSynced closes a node sync (SyncNodes): a partial reconcile of a
// few nodes between cycles, driven by the source's notifications.
type NodesSynced struct{ Report NodeSyncReport }

func (NodesSynced) event() {}

// NodeAttrs starts the attributes of a log record about one node: its
// uuid as "node" and, when known, its name at the source as "node_name",
// then attrs.
func NodeAttrs(uuid, name string, attrs ...any) []any {
	out := make([]any, 0, 4+len(attrs))
	out = append(out, "node", uuid)
	if name != "" {
		out = append(out, "node_name", name)
	}
	return append(out, attrs...)
}
