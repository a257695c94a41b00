package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// A quarantine that lasts an hour of one-minute cycles logs when it
// starts, at most every five minutes while it lasts, and when it clears:
// 13 lines, not 60; each names the node's uuid and name.
func TestPersistentErrorLogsABoundedNumberOfLines(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var l errorLog
	bad := engine.Report{
		Outcomes: []engine.Outcome{{Node: "n-1", Name: "rack1-n01", Kind: engine.KindQuarantined}},
		Errors:   []engine.Error{{Node: "n-1", Kind: engine.ErrQuarantined, Message: "no resource_class"}},
	}
	at := time.Unix(0, 0)
	for range 60 {
		l.record(log, bad, at)
		at = at.Add(time.Minute)
	}
	l.record(log, engine.Report{}, at)
	out := buf.String()
	lines := strings.Count(out, "\n")
	if lines != 13 || strings.Count(out, `msg="cycle error"`) != 1 || strings.Count(out, "cycle error persists") != 11 ||
		strings.Count(out, "cycle error cleared") != 1 {
		t.Fatalf("%d lines:\n%s", lines, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, "node=n-1") || !strings.Contains(line, "node_name=rack1-n01") {
			t.Fatalf("a line without the node: %s", line)
		}
	}
	if !strings.Contains(out, "cycles=60") {
		t.Errorf("the cleared line does not count the cycles:\n%s", out)
	}
}

// A listing that keeps failing names new request ids every cycle (the
// cycle's global one and Placement's): it is still one lasting error.
func TestLastingErrorIgnoresRequestIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var l errorLog
	at := time.Unix(0, 0)
	for i := range 10 {
		msg := fmt.Sprintf("list providers: GET /resource_providers: 503 Service Unavailable "+
			"[request req-%08d-0000-4000-8000-000000000000, global req-%08d-1111-4111-8111-111111111111]; no writes this cycle", i, i)
		l.record(log, engine.Report{Errors: []engine.Error{{Kind: engine.ErrListing, Message: msg}}}, at)
		at = at.Add(time.Minute)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("%d lines, want the start and one repeat:\n%s", n, buf.String())
	}
}
