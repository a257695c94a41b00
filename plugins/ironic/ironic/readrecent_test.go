package ironic

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// Nodes a notification just named are among those changed last: five of
// fifty changed are read in one request, each exactly as a listing gives
// it; one not changed lately costs one GET more.
func TestReadNodesRecentFirst(t *testing.T) {
	nodes := fakeironic.Generate(50, 3)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{}, nil)
	var ask []string
	for i := 10; i < 15; i++ {
		fake.Update(nodes[i].UUID, func(n *fakeironic.Node) { n.Maintenance = true })
		ask = append(ask, nodes[i].UUID)
	}
	listed, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hostabi.Node{}
	for _, n := range listed {
		want[n.UUID] = n
	}
	for _, tc := range []struct {
		ask      []string
		requests int
	}{{ask, 1}, {append(ask, nodes[40].UUID), 2}} {
		before := len(fake.Requests())
		got, err := c.ReadNodes(tc.ask)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.ask) {
			t.Fatalf("read %d nodes of %d", len(got), len(tc.ask))
		}
		for _, n := range got {
			if !reflect.DeepEqual(n, want[n.UUID]) {
				t.Errorf("read node differs from the listing:\n read %+v\n list %+v", n, want[n.UUID])
			}
		}
		if reqs := fake.Requests()[before:]; len(reqs) != tc.requests {
			t.Errorf("%d nodes: %d requests (%v), want %d", len(tc.ask), len(reqs), reqs, tc.requests)
		}
	}
}

// An Ironic that refuses the sort by updated_at (400) costs one refused
// request, once: the nodes are read a GET each, then and from then on.
func TestReadNodesRecentRefused(t *testing.T) {
	nodes := fakeironic.Generate(10, 3)
	fake := fakeironic.New(nodes, 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.URL.Query().Get("sort_key") == "updated_at" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error_message": "{\"faultstring\": \"Invalid sort key\"}"}`))
			return true
		}
		return false
	}
	c := start(t, fake, Config{}, nil)
	ask := []string{nodes[1].UUID, nodes[2].UUID}
	for round, want := range []int{3, 2} {
		before := len(fake.Requests())
		got, err := c.ReadNodes(ask)
		if err != nil || len(got) != 2 {
			t.Fatalf("round %d: %d nodes, %v", round, len(got), err)
		}
		var reqs []string // the node requests, not the version's
		for _, r := range fake.Requests()[before:] {
			if strings.HasPrefix(r, "/v1/nodes") {
				reqs = append(reqs, r)
			}
		}
		if len(reqs) != want {
			t.Errorf("round %d: %d requests (%v), want %d", round, len(reqs), reqs, want)
		}
		if round == 1 && strings.Contains(strings.Join(reqs, " "), "updated_at") {
			t.Errorf("the refused sort was asked again: %v", reqs)
		}
	}
}
