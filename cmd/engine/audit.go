package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
)

// exitDrift is audit's status when it found drift, as nova-manage
// placement audit's.
const exitDrift = 3

// errDrift: the audit found drift and printed it.
var errDrift = errors.New("drift found")

// The kinds of drift audit finds (docs/CLI.md).
const (
	driftNoProvider = "no_provider"      // a node the source lists has no provider
	driftNoNode     = "no_node"          // this engine's provider has no node at the source
	driftInventory  = "inventory"        // total, class, min/max/step, ratio differ
	driftReserved   = "reserved"         // reserved differs
	driftTraits     = "traits"           // a trait missing or one the engine added left over
	driftAggregates = "aggregates"       // likewise an aggregate
	driftHold       = "hold"             // a hold missing, or one without a reason
	driftForeign    = "foreign_consumer" // an allocation of no instance the source lists, nor a hold
	driftOwnership  = "ownership"        // the provider or its name belongs to another engine
	driftQuarantine = "quarantined"      // the source's record is unusable: Placement may be stale
)

// finding is one drift between the source and Placement.
type finding struct {
	Kind   string `json:"kind"`
	Node   string `json:"node"`
	Name   string `json:"name,omitempty"`
	Detail string `json:"detail"`
}

// auditReport is what `engine audit --json` prints.
type auditReport struct {
	Nodes    int       `json:"nodes"`
	Findings []finding `json:"findings"`
	// Paused are the nodes an operator paused (engine pause): not drift,
	// since nothing is to be written to them, but said, with the reason.
	Paused []finding `json:"paused,omitempty"`
	Errors []string  `json:"errors,omitempty"`
}

// cmdAudit compares the source with Placement and writes nothing: it
// runs a plan (the same decisions as a cycle) and reads the allocations
// of this engine's providers. Exit 0 clean, 3 drift, 1 failed.
func cmdAudit(ctx context.Context, a args, out printer, log *slog.Logger) error {
	w, err := snapshotSetup(ctx, a.config, log)
	if err != nil {
		return err
	}
	defer w.close(ctx)
	src := &recordingSource{Plugin: w.plugin}
	r, ignore := auditPlan(ctx, w, src, log)
	for _, e := range r.Errors {
		if e.Kind == engine.ErrListing || e.Kind == engine.ErrPlugin || e.Kind == engine.ErrCoordination {
			return fmt.Errorf("%s: %s", e.Kind, e.Message)
		}
	}
	rep := auditReport{Nodes: r.Nodes, Findings: fromPlan(r, ignore), Paused: pausedIn(r)}
	for _, e := range r.Errors {
		switch e.Kind {
		case engine.ErrQuarantined, engine.ErrOwned, engine.ErrConflict, engine.ErrInvalidData:
		default: // the plan could not judge this provider
			rep.Errors = append(rep.Errors, e.Message)
		}
	}
	allocs, err := allocationDrift(ctx, w.pc, policy(w.cfg), src, r, rep.Findings)
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	rep.Findings = append(rep.Findings, allocs...)
	if err := ownedElsewhere(ctx, w.pc, rep.Findings); err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	slices.SortFunc(rep.Findings, func(a, b finding) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Detail, b.Detail))
	})
	if err := out.print(rep, func() { rep.render(out.w) }); err != nil {
		return err
	}
	switch {
	case len(rep.Errors) > 0:
		return errCycleFailed
	case len(rep.Findings) > 0:
		return errDrift
	}
	return nil
}

// auditPlan is the plan audit judges from. In observe mode it is the
// observe cycle's (the providers of deleted nodes no engine owns too),
// and ignore lists the engine's own marks, which are not drift there
// (driftOf, observe.go).
func auditPlan(ctx context.Context, w *assembly, src *recordingSource, log *slog.Logger) (engine.Report, []string) {
	eng := w.engineOver(src, nil, log)
	if w.cfg.Engine.Mode != "observe" {
		return eng.Plan(ctx), nil
	}
	return eng.Observe(ctx), append([]string{ownerTrait(w.cfg)}, w.cfg.Provider.MarkerTraits...)
}

// fromPlan turns the plan's outcomes and writes into findings; a traits
// change that only adds ignored traits is none.
func fromPlan(r engine.Report, ignore []string) []finding {
	var fs []finding
	add := func(o engine.Outcome, kind, detail string) {
		fs = append(fs, finding{Kind: kind, Node: o.Node, Name: o.Name, Detail: detail})
	}
	names := map[string]string{}
	for _, o := range r.Outcomes {
		names[o.Node] = o.Name
		switch o.Kind {
		case engine.KindCreated:
			add(o, driftNoProvider, "the source lists it; Placement has no provider")
		case engine.KindUpdated:
			for _, c := range o.Changes {
				if !onlyAdds(c, ignore) {
					add(o, changeKind(c), changeText(c))
				}
			}
		case engine.KindKept, engine.KindPendingDeletion, engine.KindDeleted, engine.KindBlocked:
			add(o, driftNoNode, strings.Trim(string(o.Kind)+" "+detail(o), " "))
		case engine.KindConflict:
			add(o, driftOwnership, o.Message)
		case engine.KindQuarantined:
			add(o, driftQuarantine, o.Reason+": "+o.Message)
		}
	}
	for _, w := range r.Writes {
		switch w.Op {
		case engine.OpHold:
			fs = append(fs, finding{Kind: driftHold, Node: w.UUID, Name: names[w.UUID], Detail: "hold missing"})
		case engine.OpReleaseHold:
			fs = append(fs, finding{Kind: driftHold, Node: w.UUID, Name: names[w.UUID], Detail: "hold without a reason"})
		}
	}
	return fs
}

// onlyAdds says c is a traits change that only adds traits of ignore.
func onlyAdds(c engine.Change, ignore []string) bool {
	return len(ignore) > 0 && c.Field == "traits" && len(c.Removed) == 0 &&
		!slices.ContainsFunc(c.Added, func(t string) bool { return !slices.Contains(ignore, t) })
}

// pausedIn lists the plan's paused nodes.
func pausedIn(r engine.Report) []finding {
	var out []finding
	for _, o := range r.Outcomes {
		if o.Kind == engine.KindPaused {
			out = append(out, finding{Kind: string(o.Kind), Node: o.Node, Name: o.Name, Detail: o.Message})
		}
	}
	return out
}

// ownedElsewhere turns a missing provider into an ownership conflict
// when Placement has a provider of that uuid: the plan does not read
// providers it would create, but the create would fail.
func ownedElsewhere(ctx context.Context, pc *placement.Client, fs []finding) error {
	for i, f := range fs {
		if f.Kind != driftNoProvider {
			continue
		}
		_, traits, err := pc.Traits(ctx, f.Node)
		if errors.Is(err, placement.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		owner := "no owner marker"
		for _, t := range traits {
			if strings.HasPrefix(t, engine.OwnerTraitPrefix) {
				owner = "owned by " + t
			}
		}
		fs[i].Kind, fs[i].Detail = driftOwnership, "a provider of this uuid exists, "+owner+": left alone"
	}
	return nil
}

func changeKind(c engine.Change) string {
	switch c.Field {
	case "reserved":
		return driftReserved
	case "traits":
		return driftTraits
	case "aggregates":
		return driftAggregates
	}
	return driftInventory
}

func changeText(c engine.Change) string {
	if c.Field == "traits" || c.Field == "aggregates" || c.Field == "class" {
		return strings.TrimSpace(c.Field + " want" + setDiff(c.Added, c.Removed))
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s: Placement %s, source %s", c.Class, c.Field, c.From, c.To))
}

// allocationDrift reads the allocations of every provider of this
// engine in the plan and names those of consumers that are neither an
// instance the source lists on the node nor this engine's hold, and,
// beside nova, each hold that is missing or has no reason (holdDrift),
// unless the plan named it already (in fs).
func allocationDrift(ctx context.Context, pc *placement.Client, pol engine.Policy, src *recordingSource, r engine.Report, fs []finding) ([]finding, error) {
	instances := map[string]bool{} // node/instance
	for _, in := range src.instances {
		instances[strings.ToLower(in.NodeUUID)+"/"+in.UUID] = true
	}
	for _, n := range src.nodes {
		if n.InstanceUUID != "" {
			instances[strings.ToLower(n.UUID)+"/"+n.InstanceUUID] = true
		}
	}
	holds := newHoldCheck(pol, src.nodes, fs)
	var out []finding
	for _, o := range r.Outcomes {
		if o.Kind == engine.KindCreated || o.Kind == engine.KindConflict || o.Kind == engine.KindQuarantined {
			continue // no provider of ours to read
		}
		allocs, err := pc.ProviderAllocations(ctx, o.Node)
		if errors.Is(err, placement.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		hold := engine.HoldConsumer(pol.OwnerTrait, o.Node)
		for c, res := range allocs {
			if c != hold && !instances[o.Node+"/"+c] {
				out = append(out, finding{Kind: driftForeign, Node: o.Node, Name: o.Name,
					Detail: fmt.Sprintf("consumer %s holds %v; the source lists no such instance on the node", c, res)})
			}
		}
		_, held := allocs[hold]
		if f, ok := holds.judge(o, held); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func (r auditReport) render(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if len(r.Findings) > 0 {
		fmt.Fprintln(tw, "DRIFT\tNODE\tUUID\tDETAIL")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Kind, orDash(f.Name), f.Node, f.Detail)
	}
	tw.Flush()
	for _, p := range r.Paused {
		fmt.Fprintf(out, "paused (not written, not judged): %s %s: %s\n", orDash(p.Name), p.Node, p.Detail)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(out, "audit: %d nodes, Placement matches the source\n", r.Nodes)
		return
	}
	fmt.Fprintf(out, "audit: %d nodes, %d drifts found (nothing was written)\n", r.Nodes, len(r.Findings))
	for _, e := range r.Errors {
		fmt.Fprintf(out, "not judged: %s\n", e)
	}
}
