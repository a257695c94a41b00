package ironic

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// TestRecentNodes: the nodes changed last, newest first, each with its
// updated_at, in one request; a node changed again moves to the front
// with a new stamp.
func TestRecentNodes(t *testing.T) {
	nodes := fakeironic.Generate(50, 3)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{}, nil)
	for _, i := range []int{7, 2, 30} {
		fake.Update(nodes[i].UUID, func(n *fakeironic.Node) { n.Maintenance = true })
	}
	before := len(fake.Requests())
	uuids, changed, err := c.RecentNodes(3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{nodes[30].UUID, nodes[2].UUID, nodes[7].UUID}; !slices.Equal(uuids, want) {
		t.Fatalf("recent %v, want %v", uuids, want)
	}
	reqs := slices.DeleteFunc(fake.Requests()[before:], func(r string) bool { return r == "/v1/" }) // version discovery, once
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "/v1/nodes/detail?") {
		t.Fatalf("requests %v, want one GET /v1/nodes/detail", reqs)
	}
	fake.Update(nodes[7].UUID, func(n *fakeironic.Node) { n.Fault = "power failure" })
	again, stamps, err := c.RecentNodes(3)
	if err != nil {
		t.Fatal(err)
	}
	if again[0] != nodes[7].UUID || stamps[0] == changed[2] || stamps[1] != changed[0] {
		t.Fatalf("after node 7 changed: %v %v (before %v %v)", again, stamps, uuids, changed)
	}
}
