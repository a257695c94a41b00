package engine_test

import (
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// Nodes of two conductor groups land in two aggregates; a node moved to
// the other group moves in the next cycle with one PUT of its aggregates,
// keeping an aggregate another writer added.
func TestCycleMovesNodeBetweenGroupAggregates(t *testing.T) {
	const (
		aggA    = "aaaaaaaa-0000-4000-8000-000000000001"
		aggB    = "bbbbbbbb-0000-4000-8000-000000000002"
		foreign = "ffffffff-0000-4000-8000-00000000000f"
	)
	r := newRig(t, 4)
	a, b := "rack-a", "rack-b"
	r.pol.AggregateRules = engine.AggregateRules{
		{Zone: "az1", ConductorGroup: &a, Aggregates: []string{aggA}},
		{Zone: "az2", ConductorGroup: &b, Aggregates: []string{aggB}},
	}
	r.restart()
	r.src.set(func(s *source) {
		for i := range s.nodes {
			s.nodes[i].ConductorGroup = []string{a, b}[i%2]
		}
	})
	r.cleanCycle()
	for i := range 4 {
		want := []string{[]string{aggA, aggB}[i%2]}
		if got := r.provider(nodeUUID(i)).Aggregates; !slices.Equal(got, want) {
			t.Fatalf("node %d: aggregates %v, want %v", i, got, want)
		}
	}
	moved := nodeUUID(0)
	if err := r.fake.AddAggregate(moved, foreign); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes[0].ConductorGroup = b })
	r.fake.ResetRequests()
	r.cleanCycle()
	puts := r.fake.Find("PUT", "/resource_providers/*/aggregates")
	if len(puts) != 1 || puts[0].Path != "/resource_providers/"+moved+"/aggregates" {
		t.Fatalf("aggregate writes %v, want one for %s", puts, moved)
	}
	if got := r.provider(moved).Aggregates; !slices.Equal(got, []string{aggB, foreign}) {
		t.Fatalf("moved node: aggregates %v", got)
	}
	if rep := r.cleanCycle(); rep.Updated != 0 || rep.Created != 0 {
		t.Fatalf("a settled fleet changed: %+v", rep)
	}
}
