package ops

import (
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// Outcome classifies a finished cycle.
type Outcome string

const (
	OK      Outcome = "ok"      // no error: Placement matches
	Partial Outcome = "partial" // errors, but providers were synced
	Failed  Outcome = "failed"  // nothing synced: a listing failed, or every write did
)

// Classify says how a cycle went. Partial counts as success for health:
// one bad node (quarantined, or owned by someone else) must not make the
// whole daemon look down. But a cycle in which most provider syncs failed
// (Placement died under it) is a failure, not a partial success.
func Classify(r engine.Report) Outcome {
	synced := r.Created + r.Updated + r.Unchanged + r.Deleted
	switch {
	case len(r.Errors) == 0:
		return OK
	case synced > 0 && r.Failed <= synced:
		return Partial
	}
	return Failed
}

// Cycle is one finished cycle as the status page shows it.
type Cycle struct {
	Start   time.Time
	End     time.Time
	Outcome Outcome
	Report  engine.Report // Writes dropped: the drift rows say what changed
	// Drift lists the providers written or failing in this cycle, at most
	// maxDrift; DriftTotal counts them all. Only the newest cycle keeps it.
	Drift      []DriftRow
	DriftTotal int
}

// DriftRow is one provider the cycle found different from its desired
// state: a write (with the generations around it) or an error.
type DriftRow struct {
	Node   string
	Op     string
	Before string
	After  string
	Kind   string // of an error (engine.ErrorKind)
	Error  string
}

// maxDrift caps the rows kept for one cycle: a cold start writes every
// provider, and the page must stay small.
const maxDrift = 500

// drift collects the rows of the cycle in progress from the engine's events.
type drift struct {
	mu    sync.Mutex
	rows  []DriftRow
	total int
}

func (d *drift) add(r DriftRow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.total++
	if len(d.rows) < maxDrift {
		d.rows = append(d.rows, r)
	}
}

func (d *drift) take() ([]DriftRow, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows, total := d.rows, d.total
	d.rows, d.total = nil, 0
	return rows, total
}

// Observe is engine.Observer: the outcomes, listings and writes of the
// cycle under way become the node table and its drift rows. Plans are
// ignored, but observe mode's cycles: they are the daemon's.
func (o *Ops) Observe(ev engine.Event) {
	if start, ok := ev.(engine.CycleStarted); ok {
		plan := start.Plan && !start.Observe
		o.planning.Store(plan)
		if !plan {
			o.nodes.started()
		}
		return
	}
	if o.planning.Load() {
		if _, end := ev.(engine.CycleFinished); end {
			o.planning.Store(false) // a node sync may follow a plan the API ran
		}
		return // a plan's listings and outcomes say nothing of Placement
	}
	o.nodes.observe(ev, o.now)
	switch ev := ev.(type) {
	case engine.NodesSynced:
		o.nodes.nodesSynced()
	case engine.ProviderWritten:
		o.drift.add(DriftRow{Node: ev.Node, Op: string(ev.Op), Before: ev.GenerationBefore, After: ev.GenerationAfter})
	case engine.ProviderOutcome:
		if ev.Outcome.Kind == engine.KindDeleted {
			o.drift.add(DriftRow{Node: ev.Outcome.Node, Op: string(engine.OpDelete)})
		}
	}
}

// errorRows turns a cycle's errors into drift rows.
func errorRows(errs []engine.Error) []DriftRow {
	out := make([]DriftRow, 0, len(errs))
	for _, e := range errs {
		out = append(out, DriftRow{Node: e.Node, Op: "error", Kind: string(e.Kind), Error: e.Message})
	}
	return out
}
