package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
)

// Every log record about a node the source lists names it twice: its
// uuid ("node") and its name at the source ("node_name"): the writes,
// the reserve of a quarantined node, a hold placed and released.
func TestNodeRecordsCarryUUIDAndName(t *testing.T) {
	r := besideRig(t, 4)
	for i := range r.src.nodes {
		r.src.nodes[i].Name = fmt.Sprintf("rack1-n%02d", i)
	}
	var logs bytes.Buffer
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: r.fake.URL(), Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	r.eng = engine.New(r.src, pc, r.pol, r.opts, r.state, slog.New(slog.NewJSONHandler(&logs, nil)))
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[1].Maintenance = true
		s.nodes[2].ResourceClass = "" // quarantined: its provider fully reserved
		s.nodes[3].Retired = true     // beside nova: a hold
	})
	r.cycle()
	r.src.set(func(s *source) { s.nodes[3].Retired = false }) // its hold released
	r.cycle()
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		node, ok := rec["node"].(string)
		if !ok {
			continue
		}
		var i int
		fmt.Sscanf(node[len(node)-2:], "%d", &i)
		if want := fmt.Sprintf("rack1-n%02d", i); rec["node_name"] != want {
			t.Errorf("record about %s names it %v, want %s: %s", node, rec["node_name"], want, line)
		}
		seen[rec["msg"].(string)] = true
	}
	for _, msg := range []string{"provider written", "provider fully reserved", "hold placed", "hold released"} {
		if !seen[msg] {
			t.Errorf("no %q record: %v\n%s", msg, seen, logs.String())
		}
	}
}
