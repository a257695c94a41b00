package engine

import (
	"slices"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

const (
	aggA = "aaaaaaaa-0000-4000-8000-000000000001"
	aggB = "bbbbbbbb-0000-4000-8000-000000000002"
	aggC = "cccccccc-0000-4000-8000-000000000003"
	aggX = "eeeeeeee-0000-4000-8000-00000000000e" // every provider's
)

func ptr(s string) *string { return &s }

func TestAggregateRulesMatch(t *testing.T) {
	rules := AggregateRules{
		{Zone: "az-gpu", ResourceClass: ptr("baremetal-gpu"), Aggregates: []string{aggC}},
		{Zone: "az1", ConductorGroup: ptr("rack-a"), Aggregates: []string{aggA}},
		{Zone: "az2", ConductorGroup: ptr("rack-b"), Shard: ptr("s1"), Aggregates: []string{aggB}},
		{Zone: "default", ConductorGroup: ptr(""), Aggregates: []string{aggB}},
	}
	node := func(group, shard, class string) *hostabi.Node {
		return &hostabi.Node{ConductorGroup: group, Shard: shard, ResourceClass: class}
	}
	for _, c := range []struct {
		name string
		n    *hostabi.Node
		want int
	}{
		{"group", node("rack-a", "", "gold"), 1},
		{"group case-folded as Ironic stores it", node("RACK-A", "", "gold"), 1},
		{"first match: class before group", node("rack-a", "", "baremetal-gpu"), 0},
		{"class normalised", node("rack-b", "", "BAREMETAL_GPU"), 0},
		{"every selector must match", node("rack-b", "s2", "gold"), -1},
		{"group and shard", node("rack-b", "s1", "gold"), 2},
		{"the default group is \"\"", node("", "s9", "gold"), 3},
		{"no class never matches a class rule", node("other", "", ""), -1},
		{"no rule", node("other", "", "gold"), -1},
	} {
		if got := rules.Match(c.n); got != c.want {
			t.Errorf("%s: rule %d, want %d", c.name, got, c.want)
		}
	}
	if z, ok := rules.Zone(node("rack-a", "", "gold")); z != "az1" || !ok {
		t.Errorf("zone %q %v", z, ok)
	}
	if z, ok := rules.Zone(node("x", "", "gold")); z != "" || ok {
		t.Errorf("zone of an unmatched node %q %v", z, ok)
	}
	if d := rules[2].Describe(); d != `conductor_group="rack-b" shard="s1"` {
		t.Errorf("describe %s", d)
	}
}

// Owner and property rules: exact values, a node without the property
// never matches, first match still wins, and the fields the source must
// send are exactly those the rules name.
func TestAggregateRulesByOwnerAndProperty(t *testing.T) {
	rules := AggregateRules{
		{Zone: "az-r12", Property: "properties.rack", Value: ptr("r12"), Aggregates: []string{aggA}},
		{Zone: "az-tenant", Owner: ptr("p-1"), Aggregates: []string{aggB}},
		{Zone: "az-row", Owner: ptr("p-2"), Property: "extra.row", Value: ptr(""), Aggregates: []string{aggC}},
		{Zone: "az-rack-again", Property: "properties.rack", Value: ptr("r13"), Aggregates: []string{aggC}},
	}
	node := func(owner string, props map[string]string) *hostabi.Node {
		return &hostabi.Node{Owner: owner, Properties: props, ResourceClass: "gold"}
	}
	for _, c := range []struct {
		name string
		n    *hostabi.Node
		want int
	}{
		{"property", node("", map[string]string{"properties.rack": "r12"}), 0},
		{"first match: property before owner", node("p-1", map[string]string{"properties.rack": "r12"}), 0},
		{"owner", node("p-1", map[string]string{"properties.rack": "r99"}), 1},
		{"owner is exact", node("P-1", nil), -1},
		{"value is exact", node("", map[string]string{"properties.rack": "R12"}), -1},
		{"an empty value is a value", node("p-2", map[string]string{"extra.row": ""}), 2},
		{"an absent property is not the empty value", node("p-2", nil), -1},
		{"owner and property both", node("p-3", map[string]string{"extra.row": ""}), -1},
		{"a later rule on the same property", node("", map[string]string{"properties.rack": "r13"}), 3},
		{"no owner, no properties", node("", nil), -1},
	} {
		if got := rules.Match(c.n); got != c.want {
			t.Errorf("%s: rule %d, want %d", c.name, got, c.want)
		}
	}
	f := rules.Fields()
	if !f.Owner || !slices.Equal(f.Properties, []string{"properties.rack", "extra.row"}) {
		t.Errorf("fields %+v", f)
	}
	if f := rules[3:].Fields(); f.Owner || len(f.Properties) != 1 {
		t.Errorf("fields of a property rule alone %+v", f)
	}
	if f := (AggregateRules{{Shard: ptr("s"), Aggregates: []string{aggA}}}).Fields(); !f.Empty() {
		t.Errorf("a shard rule asks for %+v", f)
	}
	if d := rules[2].Describe(); d != `owner="p-2" extra.row=""` {
		t.Errorf("describe %s", d)
	}
}

func TestDesiredAggregatesByRule(t *testing.T) {
	p := pol
	p.Aggregates = []string{aggX}
	p.AggregateRules = AggregateRules{
		{ConductorGroup: ptr("rack-a"), Aggregates: []string{aggA}},
		{ConductorGroup: ptr("rack-b"), Aggregates: []string{aggB, aggC}},
	}
	a, b, other := bm(u1, "gold"), bm(u2, "gold"), bm(u3, "gold")
	a.ConductorGroup, b.ConductorGroup, other.ConductorGroup = "rack-a", "rack-b", "rack-z"
	ds, probs := DesiredState([]hostabi.Node{a, b, other}, nil, p)
	if len(probs) != 0 || len(ds) != 3 {
		t.Fatalf("desired %v problems %v", ds, probs)
	}
	want := map[string][]string{u1: {aggA, aggX}, u2: {aggB, aggC, aggX}, u3: {aggX}}
	for _, d := range ds {
		if !slices.Equal(d.Aggregates, want[d.UUID]) {
			t.Errorf("%s: aggregates %v, want %v", d.UUID, d.Aggregates, want[d.UUID])
		}
	}
}

// A node moving to another group moves in one write: the old zone's
// aggregate goes (the record says the engine added it) and the new one
// comes in the same PUT; a foreign aggregate stays.
func TestAggregateMoveIsOneWrite(t *testing.T) {
	const foreign = "ffffffff-0000-4000-8000-00000000000f"
	d := Desired{UUID: u1, Aggregates: []string{aggB}}
	o := Observed{Exists: true, Generation: "3", Aggregates: []string{aggA, foreign}}
	ws := Plan(d, o, Managed{Aggregates: []string{aggA}})
	if len(ws) != 1 || ws[0].Op != OpAggregates || !slices.Equal(ws[0].Aggregates, []string{aggB, foreign}) {
		t.Fatalf("writes %+v", ws)
	}
	// Without the record (a lost state file) the engine only adds: the
	// node is in both until reown, never in neither.
	ws = Plan(d, o, Managed{})
	if len(ws) != 1 || !slices.Equal(ws[0].Aggregates, []string{aggA, aggB, foreign}) {
		t.Fatalf("writes without a record %+v", ws)
	}
}
