package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rpengine/rpengine/engine"
)

// zoneView is the aggregate rule a node matches: its zone and the
// aggregates its provider is to be in (provider.aggregate_rules).
type zoneView struct {
	Rule       int      `json:"rule"` // index in provider.aggregate_rules
	Zone       string   `json:"zone,omitempty"`
	Selects    string   `json:"selects"`
	Aggregates []string `json:"aggregates"`
}

// zoneOf is the rule that places x's listed node, nil when the node is not
// listed or no rule matches it.
func (x *explanation) zoneOf(rules engine.AggregateRules) *zoneView {
	if x.Source == nil {
		return nil
	}
	i := rules.Match(x.Source)
	if i < 0 {
		return nil
	}
	r := rules[i]
	return &zoneView{Rule: i, Zone: r.Zone, Selects: r.Describe(), Aggregates: r.Aggregates}
}

// renderZone prints the node's zone line, if a rule matched it.
func (x *explanation) renderZone(out io.Writer) {
	z := x.Zone
	if z == nil {
		return
	}
	fmt.Fprintf(out, "  zone %s: provider.aggregate_rules[%d] (%s) puts it in %s\n",
		orDash(z.Zone), z.Rule, z.Selects, strings.Join(z.Aggregates, " "))
}
