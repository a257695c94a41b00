package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/conformance"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// The Ironic plugin passes the suite `engine plugin test` runs, against
// a fake Ironic of 300 nodes with baremetal granted.
func TestIronicPassesTheConformanceSuite(t *testing.T) {
	srv := httptest.NewServer(fakeironic.New(fakeironic.Generate(300, 5), 82))
	defer srv.Close()
	var lines []string
	failed := false
	ok := conformance.Run(context.Background(), conformance.Options{
		Path:   plugintest.Build(t, "plugins/ironic"),
		Config: []byte(`{"page_size": 100}`),
		Host:   wasmhost.Options{CacheDir: plugintest.CacheDir(), Services: map[string]string{"baremetal": srv.URL}},
	}, func(r conformance.Result) {
		lines = append(lines, string(r.Status)+" "+r.Check+" "+r.Detail)
		failed = failed || r.Status != conformance.Pass
	})
	out := strings.Join(lines, "\n")
	if !ok || failed || len(lines) != 15 { // 12 checks, and 3 of the event capability (internal/conformance/events.go)
		t.Fatalf("the Ironic plugin does not pass:\n%s", out)
	}
	for _, want := range []string{"PASS list_nodes 300 nodes, complete", "PASS describe ironic 1.1.0",
		"used [baremetal (", "PASS read_nodes asked 6: 5 nodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
