package engine

import (
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// BenchmarkDesiredStateAggregateRules100k is the desired state of 100,000
// nodes with no aggregate rule, and with four conductor-group rules and a
// resource-class rule first (the class rule makes every node normalise
// its class): what the rules add to a cycle.
func BenchmarkDesiredStateAggregateRules100k(b *testing.B) {
	groups := []string{"rack-a", "rack-b", "rack-c", "rack-d"}
	nodes := make([]hostabi.Node, 100_000)
	for i := range nodes {
		nodes[i] = hostabi.Node{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), ConductorGroup: groups[i%4],
			ResourceClass: []string{"baremetal-gold", "baremetal-silver"}[i%2], PowerState: "power on", ProvisionState: "available"}
	}
	gpu := "baremetal-gpu"
	var rules AggregateRules
	rules = append(rules, AggregateRule{ResourceClass: &gpu, Aggregates: []string{aggC}})
	for i := range groups {
		rules = append(rules, AggregateRule{ConductorGroup: &groups[i], Aggregates: []string{fmt.Sprintf("aaaaaaaa-0000-4000-8000-00000000000%d", i)}})
	}
	for _, c := range []struct {
		name  string
		rules AggregateRules
	}{{"none", nil}, {"five", rules}} {
		pol := Policy{OwnerTrait: OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}, AggregateRules: c.rules}
		b.Run(c.name, func(b *testing.B) {
			var spare spareDesired
			b.ReportAllocs()
			for b.Loop() {
				l := spare.take()
				if d, _ := desiredState(nodes, nil, pol, l); len(d) != len(nodes) {
					b.Fatal(len(d))
				}
				spare.give(l)
			}
		})
	}
}
