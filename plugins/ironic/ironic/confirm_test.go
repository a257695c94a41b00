package ironic

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

func TestConfirmDeletedNeedsIronicsOwn404(t *testing.T) {
	nodes := fakeironic.Generate(3, 20)
	fake := fakeironic.New(nodes, 82)
	gone, flaky, proxied := "0d6f3c52-8f5a-4b0e-9b1a-000000000001", "0d6f3c52-8f5a-4b0e-9b1a-000000000002",
		"0d6f3c52-8f5a-4b0e-9b1a-000000000003"
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	mux.HandleFunc("/v1/nodes/"+flaky, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	mux.HandleFunc("/v1/nodes/"+proxied, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404) // a proxy's 404: no version header, no Ironic message
		w.Write([]byte("<html>Not Found</html>"))
	})
	c := start(t, mux, Config{}, nil)
	asked := []string{nodes[0].UUID, gone, flaky, proxied, "../v1/nodes", nodes[2].UUID}
	deleted, present, err := c.ConfirmDeleted(asked)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deleted, []string{gone}) || !slices.Equal(present, []string{nodes[0].UUID, nodes[2].UUID}) {
		t.Fatalf("deleted %v present %v", deleted, present)
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r, "..") {
			t.Fatalf("asked for %s", r)
		}
	}
}

func TestConfirmDeletedFailsWhenIronicIsUnreachable(t *testing.T) {
	c := New(Config{}, httpTransport(map[string]string{serviceBaremetal: "http://127.0.0.1:1"}))
	deleted, present, err := c.ConfirmDeleted([]string{"0d6f3c52-8f5a-4b0e-9b1a-000000000001"})
	if err == nil || deleted != nil || present != nil {
		t.Fatalf("deleted %v present %v err %v", deleted, present, err)
	}
}

// Many nodes to prove cost one paged listing of all node uuids, not a GET
// each: 10,000 unlisted nodes (half deleted) take 5 full pages of 1,000
// here and the empty one that ends them; the next call, knowing a
// listing's pages, still lists.
func TestConfirmDeletedListsWhenManyAreAsked(t *testing.T) {
	nodes := fakeironic.Generate(5000, 21)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{}, nil)
	asked := uuids(nodes)
	for i := range 5000 {
		asked = append(asked, fmt.Sprintf("0d6f3c52-8f5a-4b0e-9b1a-%012d", i))
	}
	asked = append(asked, "not-a-uuid")
	for round := range 2 {
		before := len(fake.Requests())
		deleted, present, err := c.ConfirmDeleted(asked)
		if err != nil {
			t.Fatal(err)
		}
		reqs := listRequests(fake.Requests()[before:])
		if len(present) != 5000 || len(deleted) != 5000 || !slices.Equal(present, uuids(nodes)) {
			t.Fatalf("round %d: %d present, %d deleted", round, len(present), len(deleted))
		}
		if len(reqs) != 6 || !strings.Contains(reqs[0], "fields=uuid&") || len(fake.Requests())-before > 7 {
			t.Fatalf("round %d: %d requests for 10,001 nodes: %v", round, len(reqs), reqs)
		}
	}
	// Few: one GET each again.
	before := len(fake.Requests())
	if _, present, _ := c.ConfirmDeleted(asked[:3]); len(present) != 3 || len(fake.Requests())-before != 3 {
		t.Fatalf("3 asked: %d present, %d requests", len(present), len(fake.Requests())-before)
	}
}

// A listing that fails proves nothing: every node is unknown.
func TestConfirmDeletedByListingFailsSafe(t *testing.T) {
	nodes := fakeironic.Generate(100, 22)
	fake := fakeironic.New(nodes, 82)
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	mux.HandleFunc("/v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("marker") != "" {
			w.WriteHeader(503)
			return
		}
		fake.ServeHTTP(w, r)
	})
	c := start(t, mux, Config{PageSize: 50}, nil)
	asked := append(uuids(nodes), "0d6f3c52-8f5a-4b0e-9b1a-000000000001")
	deleted, present, err := c.ConfirmDeleted(asked)
	if err != nil || len(deleted) != 0 || len(present) != 0 {
		t.Fatalf("failed second page: deleted %d, present %d, err %v", len(deleted), len(present), err)
	}
}
