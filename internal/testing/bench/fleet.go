package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rpengine/rpengine/hostabi"
)

// Source is an in-memory inventory source, so engine cost is measured
// without the plugin.
type Source struct {
	mu    sync.Mutex
	Nodes []hostabi.Node
}

// ListNodes returns a copy of the nodes.
func (s *Source) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Nodes), nil
}

// ListInstances returns none: the bench fleet has no instances.
func (s *Source) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }

// Flip toggles maintenance on the first k nodes: k real changes.
func (s *Source) Flip(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range k {
		s.Nodes[i].Maintenance = !s.Nodes[i].Maintenance
	}
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
