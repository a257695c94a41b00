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
