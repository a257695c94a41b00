package ops_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// renamed rewrites every log message, as a later edit of the engine's
// wording would.
type renamed struct{ slog.Handler }

func (r renamed) Handle(ctx context.Context, rec slog.Record) error {
	rec.Message = "reworded: " + strings.ToUpper(rec.Message)
	return r.Handler.Handle(ctx, rec)
}

// shown is what the status page and the metrics show of a run, less the
// timings, the order of parallel writes and the generations' values (the
// fake's are random).
func shown(t *testing.T, r *rig) []string {
	var out []string
	set := func(g string) string { return fmt.Sprint(g != "") }
	for _, c := range r.ops.Snapshot().Cycles {
		var rows []string
		for _, d := range c.Drift {
			rows = append(rows, strings.Join([]string{d.Node, d.Op, set(d.Before), set(d.After), d.Kind, d.Error}, " "))
		}
		slices.Sort(rows)
		out = append(append(out, rows...), string(c.Outcome))
	}
	h := r.ops.Handler()
	for _, s := range []string{`rpengine_providers_changed_total{action="created"}`, `rpengine_providers_changed_total{action="deleted"}`,
		`rpengine_nodes{state="maintenance"}`, `rpengine_providers_quarantined`, `rpengine_cycle_errors`} {
		out = append(out, s, fmt.Sprint(metric(t, h, s)))
	}
	return out
}

// scriptedRun creates, updates, quarantines and deletes (with two
// proofs), and returns what is shown after each cycle (the page keeps
// the rows of the newest cycle only).
func scriptedRun(t *testing.T, r *rig) []string {
	var out []string
	step := func(change func(s *source)) {
		r.src.set(change)
		r.cycle()
		out = append(out, shown(t, r)...)
	}
	step(func(s *source) { s.nodes[2].ResourceClass = "" })
	step(func(s *source) { s.nodes[3].Maintenance = true; s.nodes[2].ResourceClass = "baremetal-gold" })
	step(func(s *source) { s.gone[s.nodes[4].UUID] = true; s.nodes = slices.Delete(s.nodes, 4, 5) })
	step(func(s *source) {})
	return out
}

// The page and the metrics are built from the engine's events: rewording
// every log line (or dropping the logs) changes nothing they show.
func TestRenamedLogMessagesChangeNothingShown(t *testing.T) {
	want := scriptedRun(t, newRigLogging(t, 6, slog.NewTextHandler(io.Discard, nil)))
	var logs strings.Builder
	got := map[string][]string{
		"reworded": scriptedRun(t, newRigLogging(t, 6, renamed{slog.NewTextHandler(&logs, nil)})),
		"silent":   scriptedRun(t, newRigLogging(t, 6, slog.DiscardHandler)),
	}
	if !strings.Contains(logs.String(), "reworded: PROVIDER WRITTEN") || strings.Contains(logs.String(), `msg="provider written"`) {
		t.Fatalf("the log messages were not reworded:\n%s", logs.String())
	}
	// The run shows writes, a quarantine's error and a deletion: a page
	// that showed nothing would pass the comparison trivially.
	joined := strings.Join(want, "\n")
	for _, s := range []string{"set_inventories", "delete_provider", "quarantined", "create_provider"} {
		if !strings.Contains(joined, s) {
			t.Fatalf("the run shows no %q:\n%s", s, joined)
		}
	}
	for name, g := range got {
		if !slices.Equal(g, want) {
			t.Errorf("%s logs change what is shown:\n%s\nwant\n%s", name, strings.Join(g, "\n"), joined)
		}
	}
}

// Every event a cycle emits reaches the observer, and the outcomes in the
// events are the report's.
func TestEventsMatchTheReport(t *testing.T) {
	r := newRig(t, 4)
	var evs []engine.Event
	var mu sync.Mutex // Observe runs on the sync workers
	r.watch(engine.ObserverFunc(func(e engine.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }))
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = "" })
	rep := r.cycle()
	var outs []engine.Outcome
	writes := 0
	for _, e := range evs {
		switch e := e.(type) {
		case engine.ProviderOutcome:
			outs = append(outs, e.Outcome)
		case engine.ProviderWritten:
			writes++
		}
	}
	if _, first := evs[0].(engine.CycleStarted); !first {
		t.Errorf("first event %T", evs[0])
	}
	fin, last := evs[len(evs)-1].(engine.CycleFinished)
	if !last || fin.Report.Created != 3 || fin.Report.Quarantined != 1 {
		t.Fatalf("last event %T %+v", evs[len(evs)-1], fin)
	}
	slices.SortFunc(outs, func(a, b engine.Outcome) int { return strings.Compare(a.Node, b.Node) })
	if len(outs) != 4 || len(rep.Outcomes) != 4 || outs[1].Kind != engine.KindQuarantined || outs[1].Reason != engine.CodeNoClass {
		t.Fatalf("outcomes %+v; report %+v", outs, rep.Outcomes)
	}
	for i := range outs {
		if outs[i].Node != rep.Outcomes[i].Node || outs[i].Kind != rep.Outcomes[i].Kind {
			t.Errorf("event %+v, report %+v", outs[i], rep.Outcomes[i])
		}
	}
	// create, traits, inventory per created provider (no aggregates set).
	if writes != 9 {
		t.Errorf("%d writes seen, want 9", writes)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Kind != engine.ErrQuarantined || rep.Errors[0].Node != nodeUUID(1) {
		t.Errorf("errors %+v", rep.Errors)
	}
}

// A plan (a dry cycle) in the same process leaves the node table as the
// last real cycle left it.
func TestPlanLeavesThePageAlone(t *testing.T) {
	r := newRig(t, 3)
	r.cycle()
	r.src.set(func(s *source) { s.nodes[1].Maintenance = true })
	plan := r.eng.Plan(context.Background())
	if plan.Updated != 1 {
		t.Fatalf("plan %+v", plan)
	}
	row, ok := r.ops.Node(nodeUUID(1))
	if !ok || row.State != "schedulable" || row.Outcome.Kind != engine.KindCreated {
		t.Fatalf("after a plan: %+v", row)
	}
	r.cycle()
	if row, _ := r.ops.Node(nodeUUID(1)); row.State != "maintenance" {
		t.Fatalf("after the cycle: %+v", row)
	}
}
