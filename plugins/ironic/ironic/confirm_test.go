package ironic

import (
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
