package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// render prints the explanation for a person: the answer first, then the
// evidence.
func (x *explanation) render(out io.Writer) {
	fmt.Fprintf(out, "node %s %s\n", orDash(x.Name), x.Node)
	fmt.Fprintf(out, "  %s\n", x.Why.Verdict)
	fmt.Fprintf(out, "  rule: %s\n", x.Why.Decides)
	for _, c := range x.Why.Conditions {
		fmt.Fprintf(out, "    - %s\n", c)
	}
	if x.Outcome.ProofsNeeded > 0 {
		fmt.Fprintf(out, "  deletion proofs: %d of %d\n", x.Outcome.Proof, x.Outcome.ProofsNeeded)
	}
	for _, d := range x.Drift {
		fmt.Fprintf(out, "  observe mode: drift %s (nothing written)\n", d)
	}
	if x.Owner != "" {
		fmt.Fprintf(out, "  owned by another engine: %s\n", x.Owner)
	}
	fmt.Fprintln(out, "\nsource:")
	if n := x.Source; n != nil {
		fmt.Fprintf(out, "  resource_class %s, power_state %s, provision_state %s, target_provision_state %s\n",
			orDash(n.ResourceClass), orDash(n.PowerState), orDash(n.ProvisionState), orDash(n.TargetProvisionState))
		fmt.Fprintf(out, "  maintenance %t, retired %t, fault %s, instance %s\n", n.Maintenance, n.Retired, orDash(n.Fault), orDash(n.InstanceUUID))
		if len(n.Traits) > 0 {
			fmt.Fprintf(out, "  traits %s\n", strings.Join(n.Traits, " "))
		}
		x.renderZone(out)
	} else {
		fmt.Fprintln(out, "  not listed by the plugin")
	}
	x.renderPlacement(out)
	fmt.Fprintln(out, "\nnext cycle would write:")
	if len(x.Writes) == 0 {
		fmt.Fprintln(out, "  nothing")
	}
	for _, w := range x.Writes {
		fmt.Fprintf(out, "  %s %s\n", w.Op, writeDetail(w))
	}
	for _, e := range x.Errors {
		fmt.Fprintf(out, "  error (%s): %s\n", e.Kind, e.Message)
	}
}

func (x *explanation) renderPlacement(out io.Writer) {
	fmt.Fprintln(out, "\nplacement:")
	p := x.Provider
	if p == nil {
		fmt.Fprintln(out, "  no provider")
		return
	}
	fmt.Fprintf(out, "  provider %s, generation %s\n", p.Name, p.Generation)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLASS\tTOTAL\tRESERVED\tMIN\tMAX\tSTEP\tRATIO")
	for _, rc := range slices.Sorted(maps.Keys(p.Inventory)) {
		i := p.Inventory[rc]
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%g\n", rc, i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio)
	}
	tw.Flush()
	fmt.Fprintf(out, "  traits %s\n  aggregates %s\n", orDash(strings.Join(p.Traits, " ")), orDash(strings.Join(p.Aggregates, " ")))
	if len(p.Allocations) == 0 {
		fmt.Fprintln(out, "  allocations: none")
	}
	for _, a := range p.Allocations {
		kind := orDash(a.Type)
		if a.Hold {
			kind = "hold of this engine"
		}
		fmt.Fprintf(out, "  allocation %s (%s) %v\n", a.Consumer, kind, a.Resources)
	}
}
