package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// show lists every provider of this engine with its node's name (the
// provider is named by uuid), inventory
// (ratios and units), traits and aggregates, sorted by name then uuid;
// --node takes a uuid or a name; an unknown node exits 1, on stderr.
func TestShowListsProvidersSorted(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	path := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	show := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"show", "--config", path}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code := run(context.Background(), []string{"once", "--config", path}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("once: exit %d", code)
	}
	code, out, stderr := show("-o", "json")
	var rows []shown
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 12 {
		t.Fatalf("exit %d, %v, %d rows\n%s\n%s", code, err, len(rows), out, stderr)
	}
	if !slices.IsSortedFunc(rows, func(a, b shown) int { return strings.Compare(a.Name+a.UUID, b.Name+b.UUID) }) {
		t.Errorf("rows not sorted by name: %v", rows)
	}
	r := rows[3]
	inv, ok := r.Inventory["CUSTOM_BAREMETAL"]
	if r.Name != "node-00003" || r.ProviderName != r.UUID || !ok || inv.AllocationRatio != 1 || inv.StepSize != 1 || inv.MaxUnit != 1 ||
		!slices.Contains(r.Traits, "CUSTOM_RPENGINE_OWNER_DAEMON") || r.Aggregates == nil {
		t.Fatalf("row %+v", r)
	}
	const agg = "5d3c1e0a-0000-4000-8000-000000000001"
	if err := fake.AddAggregate(r.UUID, agg); err != nil {
		t.Fatal(err)
	}
	code, out, _ = show("--node", r.Name)
	t.Logf("engine show --node %s:\n%s", r.Name, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(lines[0], "RATIO") ||
		!strings.HasPrefix(lines[1], r.Name+" ") || !strings.Contains(lines[1], "COMPUTE_NODE,CUSTOM_RPENGINE_OWNER_DAEMON  "+agg) {
		t.Fatalf("show --node %s: exit %d\n%s", r.Name, code, out)
	}
	if code, out, _ = show("--node", strings.ToUpper(r.UUID), "--json"); code != 0 || strings.Count(out, `"uuid"`) != 1 {
		t.Fatalf("show --node UUID: exit %d\n%s", code, out)
	}
	code, out, stderr = show("--node", "nosuch")
	if code != 1 || out != "" || !strings.Contains(stderr, `engine show: node "nosuch": this engine has no provider`) {
		t.Fatalf("unknown node: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
