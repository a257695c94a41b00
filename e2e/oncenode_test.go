package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// `engine once --node` against the real Placement: only the named nodes'
// providers are written (by uuid and by name); another changed node and
// one the source no longer lists are left to the next full cycle, which
// is not this one (no deletion, no reservation); an unknown node exits 1
// with the error on stderr and writes nothing.
func TestOnceNodeAgainstRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	world := func(maintenance map[int]bool, n int) string {
		var b strings.Builder
		b.WriteString("[plugin.config]\n")
		for i := range n {
			fmt.Fprintf(&b, "[[plugin.config.node]]\nuuid = %q\nname = \"once-node-%d\"\nresource_class = \"gold\"\n"+
				"power_state = \"power off\"\nprovision_state = \"available\"\nmaintenance = %v\n", u(i), i, maintenance[i])
		}
		return b.String()
	}
	id := fmt.Sprintf("oncenode-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, world(nil, 4))
	if res := runEngine(t, "once", "--config", cfg); res.code != 0 {
		t.Fatalf("first once: exit %d\n%s", res.code, res.stderr)
	}
	// Nodes 1 and 2 go into maintenance, node 3 leaves the source.
	b, _ := os.ReadFile(cfg)
	text := string(b)
	text = text[:strings.Index(text, "[plugin.config]")] + world(map[int]bool{1: true, 2: true}, 3)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	reserved := func(i int) int64 {
		p, ok := readProvider(t, url, u(i))
		if !ok {
			t.Fatalf("provider %s is gone", u(i))
		}
		return p.Inventories["CUSTOM_GOLD"].Reserved
	}
	res := runEngine(t, "once", "--config", cfg, "--node", "once-node-1", "--node", u(0))
	if res.code != 0 || !strings.Contains(res.stdout, "nodes 2, instances 0: created 0, updated 1, unchanged 1, deleted 0") {
		t.Fatalf("once --node: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if reserved(1) != 1 || reserved(2) != 0 || reserved(3) != 0 {
		t.Fatalf("reserved: node 1 %d (want 1), node 2 %d (want 0: not named), node 3 %d (want 0: not named, still there)",
			reserved(1), reserved(2), reserved(3))
	}
	res = runEngine(t, "once", "--config", cfg, "--node", "once-node-2,nosuch")
	if res.code != 1 || !strings.Contains(res.stderr, `engine once: node "nosuch": the plugin lists no such node`) || res.stdout != "" {
		t.Fatalf("unknown node: exit %d\nstdout %q\nstderr %s", res.code, res.stdout, res.stderr)
	}
	if reserved(2) != 0 {
		t.Fatalf("node 2 written although an unknown node was asked with it")
	}
	if res := runEngine(t, "once", "--config", cfg); res.code != 0 || reserved(2) != 1 {
		t.Fatalf("full once: exit %d, node 2 reserved %d\n%s", res.code, reserved(2), res.stderr)
	}
	// show, on the real Placement: the node's name, its inventory with
	// the ratio and units, its traits, sorted by name.
	res = runEngine(t, "show", "--config", cfg, "-o", "json")
	var rows []struct {
		Name, UUID  string
		Inventories map[string]struct {
			Total, Reserved int64
			StepSize        int64   `json:"step_size"`
			AllocationRatio float64 `json:"allocation_ratio"`
		}
		Traits []string
	}
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil || res.code != 0 || len(rows) != 4 {
		t.Fatalf("show: exit %d, %v\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	// Node 3 left the source: its provider is kept, without a name, and
	// sorts first.
	if rows[0].UUID != u(3) || rows[0].Name != "" || rows[2].Name != "once-node-1" || rows[2].UUID != u(1) {
		t.Fatalf("show's order or names: %+v", rows)
	}
	inv := rows[2].Inventories["CUSTOM_GOLD"]
	if inv.Total != 1 || inv.Reserved != 1 || inv.AllocationRatio != 1 || inv.StepSize != 1 || !slices.Contains(rows[2].Traits, "COMPUTE_NODE") {
		t.Fatalf("show's node 1: %+v", rows[2])
	}
}

// With the Ironic plugin, which exports read_nodes, `once --node UUID`
// reads the named nodes alone (GET /v1/nodes/{uuid}, no listing) and
// writes their providers only; a name falls back to the listing.
func TestOnceNodeReadsTheNodesAloneFromRealIronic(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	uuids := availableGold(t, c, 3, "oncenode-", "")
	proxy := newIronicProxy(t, ironicURL)
	id := fmt.Sprintf("ironic-oncenode-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "", "")
	once(t, cfg)
	c.Maintenance(t, uuids[0], true)
	c.Maintenance(t, uuids[1], true)
	lists := len(proxy.listed())
	res := runEngine(t, "once", "--config", cfg, "--node", strings.ToUpper(uuids[0]), "--log-format", "json")
	if res.code != 0 || !strings.Contains(res.stderr, `"read":"rpengine_read_nodes"`) || !strings.Contains(res.stdout, "updated 1") {
		t.Fatalf("once --node: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if got := proxy.listed()[lists:]; len(got) != 0 {
		t.Errorf("once --node UUID listed the nodes: %v", got)
	}
	want := []ironicWant{{uuids[0], "baremetal-gold", 1, nil}, {uuids[1], "baremetal-gold", 0, nil}, {uuids[2], "baremetal-gold", 0, nil}}
	ironicCheck(t, placementURL, id, want, nil)
	for _, unknown := range []string{"00000000-0000-4000-8000-0000000000ff", "no-such-node"} { // read_nodes, listing
		res = runEngine(t, "once", "--config", cfg, "--node", uuids[1]+","+unknown)
		if res.code != 1 || !strings.Contains(res.stderr, `node "`+unknown+`": the plugin lists no such node`) {
			t.Fatalf("unknown node %s: exit %d\n%s", unknown, res.code, res.stderr)
		}
	}
	ironicCheck(t, placementURL, id, want, nil) // node 1 not written beside an unknown node
	c.Provision(t, uuids[2], nodes.TargetManage, "manageable")
	res = runEngine(t, "once", "--config", cfg, "--node", "oncenode-1", "--log-format", "json")
	if res.code != 0 || !strings.Contains(res.stderr, `"read":"list_nodes"`) {
		t.Fatalf("once --node NAME: exit %d\n%s", res.code, res.stderr)
	}
	want[1].reserved = 1 // named; node 2, now manageable, was not
	ironicCheck(t, placementURL, id, want, nil)
}
