package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// pauseShown checks that the paused node's pause is shown wherever the
// engine tells an operator about a node: engine plan, engine audit
// (--json), engine explain and the status page.
func pauseShown(t *testing.T, d *runningDaemon, cfg, node, reason string) {
	t.Helper()
	verb := func(argv ...string) string {
		var out bytes.Buffer
		run(context.Background(), append(argv, "--config", cfg), &out, io.Discard)
		return out.String()
	}
	if out := verb("plan"); !strings.Contains(out, "paused") || !strings.Contains(out, node) || !strings.Contains(out, reason) {
		t.Errorf("engine plan does not show the pause of %s:\n%s", node, out)
	}
	var audit auditReport
	if err := json.Unmarshal([]byte(verb("audit", "--json")), &audit); err != nil {
		t.Fatalf("audit --json: %v", err)
	}
	if len(audit.Paused) != 1 || audit.Paused[0].Node != node || !strings.Contains(audit.Paused[0].Detail, reason) {
		t.Errorf("engine audit: paused %+v, want %s with its reason", audit.Paused, node)
	}
	if out := verb("explain", node); !strings.Contains(out, "paused until") || !strings.Contains(out, reason) {
		t.Errorf("engine explain does not show the pause:\n%s", out)
	}
	resp, err := http.Get("http://" + d.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page bytes.Buffer
	page.ReadFrom(resp.Body)
	if !strings.Contains(page.String(), `id="paused" data-paused="1"`) || !strings.Contains(page.String(), `data-uuid="`+node+`" data-state="paused"`) {
		t.Errorf("the status page does not show the pause of %s", node)
	}
}
