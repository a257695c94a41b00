package ops

import (
	"cmp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// CapacityRow counts the nodes of one resource class in one state and one
// zone at the last cycle that listed nodes. State is the node table's
// (schedulable, a reservation reason, quarantined, pending_deletion, ...);
// Zone is the zone of the node's aggregate rule, "none" when no rule
// matches it.
type CapacityRow struct {
	Class, State, Zone string
	Nodes              int
}

// registerCapacity adds the capacity gauge. Its series are replaced whole
// each cycle, so a class, state or zone that empties disappears.
func (m *Metrics) registerCapacity() {
	m.capacity = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_capacity_nodes",
		Help: "Nodes at the last cycle by resource class, state (schedulable or why not) and zone (provider.aggregate_rules)."},
		[]string{"class", "state", "zone"})
	m.reg.MustRegister(m.capacity)
}

// setCapacity replaces the capacity series with rows.
func (m *Metrics) setCapacity(rows []CapacityRow) {
	m.capacity.Reset()
	for _, r := range rows {
		m.capacity.WithLabelValues(r.Class, r.State, r.Zone).Set(float64(r.Nodes))
	}
}

// capacity counts the table's rows by class, state and zone: what the
// cycle already knows, no request. It is called once a cycle has made
// its rows the table's.
func (t *nodeTable) capacity(rules engine.AggregateRules) []CapacityRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	type key struct{ class, state, zone string }
	counts := map[key]int{}
	for id, r := range t.rows {
		n := t.source[id]
		counts[key{classOf(n, r), r.State, zoneOf(n, rules)}]++
	}
	out := make([]CapacityRow, 0, len(counts))
	for k, c := range counts {
		out = append(out, CapacityRow{Class: k.class, State: k.state, Zone: k.zone, Nodes: c})
	}
	slices.SortFunc(out, func(a, b CapacityRow) int {
		return cmp.Or(strings.Compare(a.Zone, b.Zone), strings.Compare(a.Class, b.Class), strings.Compare(a.State, b.State))
	})
	return out
}

// classOf is the Placement class a node is counted under: its normalised
// resource class, else its provider's one class, else "none" (a node
// with explicit inventories counts as "explicit").
func classOf(n *hostabi.Node, r *NodeRow) string {
	switch {
	case n != nil && n.ResourceClass != "":
		return baremetal.NormalizeResourceClass(n.ResourceClass)
	case n != nil && len(n.Resources) > 0:
		return "explicit"
	case len(r.Placement.Inventory) == 1:
		for rc := range r.Placement.Inventory {
			return rc
		}
	}
	return "none"
}

// zoneOf is the zone the node's aggregate rule names, the rule's first
// aggregate when it names none, and "none" for a node no rule matches
// (or one no longer listed).
func zoneOf(n *hostabi.Node, rules engine.AggregateRules) string {
	if n == nil {
		return "none"
	}
	i := rules.Match(n)
	switch {
	case i < 0:
		return "none"
	case rules[i].Zone != "":
		return rules[i].Zone
	case len(rules[i].Aggregates) > 0:
		return rules[i].Aggregates[0]
	}
	return "none"
}

// Capacity is the capacity table of the last cycle that listed nodes.
func (o *Ops) Capacity() []CapacityRow {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.capacityRows)
}

// countCapacity recounts after a cycle: the metric and the page's table.
func (o *Ops) countCapacity() {
	o.mu.Lock()
	rules := o.info.Zones
	o.mu.Unlock()
	rows := o.nodes.capacity(rules)
	o.Metrics.setCapacity(rows)
	o.mu.Lock()
	o.capacityRows = rows
	o.mu.Unlock()
}
