package bench

import (
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/memsource"
)

// source is the bench's inventory: the one in-memory source of the tests
// (memsource), so engine cost is measured without the plugin.
func source(nodes []hostabi.Node) *memsource.Source {
	return memsource.New(memsource.State{Nodes: nodes})
}

// flip toggles maintenance on the first k nodes of src: k real changes.
func flip(src *memsource.Source, k int) {
	src.Update(func(st *memsource.State) {
		for i := range k {
			st.Nodes[i].Maintenance = !st.Nodes[i].Maintenance
		}
	})
}

// Fleet returns n schedulable bare-metal nodes with stable uuids; salt
// keeps fleets of different runs apart on a shared Placement.
func Fleet(n int, salt uint32, classes ...string) []hostabi.Node {
	if len(classes) == 0 {
		classes = []string{"baremetal-gold", "baremetal-silver"}
	}
	out := make([]hostabi.Node, n)
	for i := range out {
		out[i] = hostabi.Node{
			UUID:          fmt.Sprintf("%08x-0000-4000-8000-%012d", salt, i),
			ResourceClass: classes[i%len(classes)],
			PowerState:    "power on", ProvisionState: "available",
		}
	}
	return out
}

// UUIDs of a fleet.
func UUIDs(nodes []hostabi.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.UUID
	}
	return out
}
