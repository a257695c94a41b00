package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rpengine/rpengine/engine"
)

// cmdPlan runs a dry cycle and prints it as a diff, node by node.
func cmdPlan(ctx context.Context, path string, asJSON bool, node string, out io.Writer, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	// The daemon of this engine, if one answers, plans with what it
	// holds in memory as well as on disk (api.go).
	var r engine.Report
	q := "plan"
	if node != "" {
		q += "?node=" + url.QueryEscape(node)
	}
	answer := daemonAnswer{v: &r}
	if asked, addr, err := fromDaemon(ctx, cfg, q, &answer, log); asked || err != nil {
		if err != nil {
			return err
		}
		log.Info("plan made by the engine running at server.listen (it proved the daemon's key)", "addr", addr)
		configNote(log, answer, path, addr)
		return finishReport(out, r, asJSON, func() { renderPlan(out, r, node) })
	}
	// The state file is read, never locked nor written: a plan runs
	// beside `engine run`, and never keeps one from starting.
	w, err := build(ctx, cfg, log, nil, true)
	if err != nil {
		return err
	}
	defer w.close(ctx)
	if err := uncoordinated(w.cfg, true); err != nil {
		return err
	}
	if cfg.Coord.Enabled() {
		done, err := planShared(ctx, w, w.eng, log)
		if err != nil {
			return err
		}
		defer done()
	}
	r = filterReport(w.eng.Plan(ctx), node)
	if node != "" && len(r.Outcomes) == 0 && len(r.Errors) == 0 {
		return unknownNode{fmt.Sprintf("node %q: not in scope: the plugin does not list it and this engine has no provider of that uuid", node)}
	}
	return finishReport(out, r, asJSON, func() { renderPlan(out, r, node) })
}

// matches says whether an outcome is the node asked for: by uuid or name.
func matches(o engine.Outcome, node string) bool {
	return node == "" || strings.EqualFold(o.Node, node) || o.Name == node
}

// filterReport keeps what concerns node ("" keeps everything); errors
// about the whole cycle are kept, since they concern every node.
func filterReport(r engine.Report, node string) engine.Report {
	if node == "" {
		return r
	}
	keep := map[string]bool{}
	r.Outcomes = slices.DeleteFunc(slices.Clone(r.Outcomes), func(o engine.Outcome) bool { return !matches(o, node) })
	for _, o := range r.Outcomes {
		keep[o.Node] = true
	}
	r.Errors = slices.DeleteFunc(slices.Clone(r.Errors), func(e engine.Error) bool { return e.Node != "" && !keep[e.Node] })
	r.Writes = slices.DeleteFunc(slices.Clone(r.Writes), func(w engine.Write) bool { return !keep[w.UUID] })
	return r
}

// planGroups orders the plan's lines: changes first, then what needs an
// operator's look; unchanged nodes are only counted.
var planGroups = []struct {
	kind   engine.OutcomeKind
	symbol string
	verb   string
	count  string
}{
	{engine.KindCreated, "+", "create", "to create"},
	{engine.KindUpdated, "~", "update", "to update"},
	{engine.KindDeleted, "-", "delete", "to delete"},
	{engine.KindPendingDeletion, ".", "pending", "pending deletion"},
	{engine.KindBlocked, "!", "blocked", "blocked"},
	{engine.KindQuarantined, "!", "quarantined", "quarantined"},
	{engine.KindConflict, "!", "conflict", "in conflict"},
	{engine.KindFailed, "!", "failed", "failed"},
	{engine.KindDeferred, "?", "deferred", "deferred"},
	{engine.KindPaused, "|", "paused", "paused"},
	{engine.KindKept, " ", "kept", "kept"},
	{engine.KindUnchanged, "", "unchanged", "unchanged"},
}

// renderPlan prints the plan as a diff: one line per node that changes
// or needs a look, grouped by kind, then a summary.
func renderPlan(out io.Writer, r engine.Report, node string) {
	byKind := map[engine.OutcomeKind][]engine.Outcome{}
	for _, o := range r.Outcomes {
		byKind[o.Kind] = append(byKind[o.Kind], o)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	var counts []string
	for _, g := range planGroups {
		os := byKind[g.kind]
		if len(os) == 0 {
			continue
		}
		counts = append(counts, fmt.Sprintf("%d %s", len(os), g.count))
		if g.symbol == "" && node == "" {
			continue // one node asked for is shown even when unchanged
		}
		slices.SortFunc(os, func(a, b engine.Outcome) int { return strings.Compare(label(a), label(b)) })
		for _, o := range os {
			fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\n", cmp.Or(g.symbol, "="), g.verb, orDash(o.Name), o.Node, detail(o))
		}
	}
	tw.Flush()
	for _, e := range r.Errors {
		if e.Node == "" || e.Kind == engine.ErrInvalidData {
			fmt.Fprintf(stderrOf(out), "error: %s\n", e.Message)
		}
	}
	if r.Failed > 0 { // as once counts them: the providers whose sync fails
		counts = append(counts, fmt.Sprintf("failed %d", r.Failed))
	}
	if len(counts) == 0 {
		counts = []string{"no nodes"}
		if node != "" {
			counts = []string{fmt.Sprintf("no node %q in scope", node)}
		}
	}
	fmt.Fprintf(out, "\nPlan: %s. Nothing was written.\n", strings.Join(counts, ", "))
}

func label(o engine.Outcome) string { return o.Name + " " + o.Node }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// detail says what changes on one node, and why.
func detail(o engine.Outcome) string {
	switch o.Kind {
	case engine.KindDeleted:
		return fmt.Sprintf("(proof %d of %d)", o.Proof, o.ProofsNeeded)
	case engine.KindPendingDeletion:
		why := "the next cycle's proof deletes it"
		if o.Reason == engine.ReasonGrace {
			why = "waiting for engine.delete_grace"
		}
		return fmt.Sprintf("(proof %d of %d: %s)", o.Proof, o.ProofsNeeded, why)
	case engine.KindCreated, engine.KindUpdated:
		return changes(o)
	case engine.KindUnchanged:
		return "(" + cmp.Or(o.Reserved, "schedulable") + ")"
	}
	msg := o.Message
	if o.Reason != "" {
		msg = o.Reason + ": " + msg
	}
	return "(" + msg + ")"
}

// changes renders a node's changes as short diffs: "reserved 0 → 1
// (maintenance)", "traits +CUSTOM_GPU −CUSTOM_OLD".
func changes(o engine.Outcome) string {
	classes := map[string]bool{}
	for _, c := range o.Changes {
		if c.Class != "" {
			classes[c.Class] = true
		}
	}
	reason := o.Reserved
	if reason == "" {
		reason = "schedulable"
	}
	var parts []string
	for _, c := range o.Changes {
		var s string
		switch c.Field {
		case "provider":
			continue
		case "class":
			s = "class" + setDiff(c.Added, c.Removed)
			if o.Kind == engine.KindCreated {
				s = strings.Join(c.Added, " ")
			}
		case "traits", "aggregates":
			if o.Kind == engine.KindCreated {
				continue // a new provider's traits are the usual ones
			}
			s = c.Field + setDiff(c.Added, c.Removed)
		default:
			s = fmt.Sprintf("%s %s → %s", c.Field, c.From, c.To)
			if len(classes) > 1 {
				s = c.Class + " " + s
			}
			if c.Field == "reserved" {
				s += " (" + reason + ")"
			}
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, "; ")
	if o.Kind == engine.KindCreated {
		out = strings.TrimSpace(out + " (" + reason + ")")
	}
	return out
}

func setDiff(added, removed []string) string {
	var b strings.Builder
	for _, a := range added {
		b.WriteString(" +" + a)
	}
	for _, r := range removed {
		b.WriteString(" −" + r)
	}
	return b.String()
}
