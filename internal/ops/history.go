package ops

import (
	"context"
	"log/slog"
	"regexp"
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
	Error  string
}

// maxDrift caps the rows kept for one cycle: a cold start writes every
// provider, and the page must stay small.
const maxDrift = 500

// drift collects the rows of the cycle in progress from the engine's logs.
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

// The engine's log lines this tap reads (engine/sync.go, deletion.go).
const (
	msgWritten = "provider written"
	msgDeleted = "provider deleted: node proven gone"
)

// tap is a slog.Handler that notes provider writes for the status page
// and passes every record on. It sees Info even when the handler behind
// it is set to Warn, so the page does not depend on the log level.
type tap struct {
	next  slog.Handler
	drift *drift
}

func (t tap) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || t.next.Enabled(ctx, l)
}

func (t tap) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == msgWritten || r.Message == msgDeleted {
		row := DriftRow{Op: "delete_provider"}
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "node":
				row.Node = a.Value.String()
			case "op":
				row.Op = a.Value.String()
			case "generation_before":
				row.Before = a.Value.String()
			case "generation_after":
				row.After = a.Value.String()
			}
			return true
		})
		t.drift.add(row)
	}
	if !t.next.Enabled(ctx, r.Level) {
		return nil
	}
	return t.next.Handle(ctx, r)
}

func (t tap) WithAttrs(as []slog.Attr) slog.Handler {
	return tap{next: t.next.WithAttrs(as), drift: t.drift}
}

func (t tap) WithGroup(name string) slog.Handler {
	return tap{next: t.next.WithGroup(name), drift: t.drift}
}

var uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// errorRows turns a cycle's errors into drift rows, naming the node where
// the message does.
func errorRows(errs []string) []DriftRow {
	out := make([]DriftRow, 0, len(errs))
	for _, e := range errs {
		out = append(out, DriftRow{Node: uuidRE.FindString(e), Op: "error", Error: e})
	}
	return out
}
