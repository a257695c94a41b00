package engine

import (
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// BenchmarkDesiredStateKept100k is the desired state of 100,000 nodes
// listed in the last cycle's order, as an idle cycle derives it: "kept"
// reads the nodes in their own order (the kept order, inNodeOrder),
// "checked" checks the last order in uuid order and visits the nodes so,
// as before. Side by side in one process, so the load moves both alike.
//
//	go test -run '^$' -bench DesiredStateKept100k -count 5 ./engine
func BenchmarkDesiredStateKept100k(b *testing.B) {
	nodes := make([]hostabi.Node, 100_000)
	for i := range nodes {
		h := uint64(i+1) * 0x9e3779b97f4a7c15
		nodes[i] = hostabi.Node{UUID: fmt.Sprintf("%08x-%04x-4%03x-8000-%012d", uint32(h>>32), uint16(h>>16), i%4096, i),
			ResourceClass: []string{"baremetal-gold", "baremetal-silver"}[i%2], PowerState: "power on", ProvisionState: "available"}
	}
	pol := Policy{OwnerTrait: OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}}
	for _, kept := range []bool{true, false} {
		name := map[bool]string{true: "kept", false: "checked"}[kept]
		b.Run(name, func(b *testing.B) {
			var spare spareDesired
			l := spare.take()
			desiredState(nodes, nil, pol, l)
			spare.give(l)
			b.ReportAllocs()
			for b.Loop() {
				l := spare.take()
				l.strict = l.strict && kept
				if d, _ := desiredState(nodes, nil, pol, l); len(d) != len(nodes) {
					b.Fatal(len(d))
				}
				spare.give(l)
			}
		})
	}
}
