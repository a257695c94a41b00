package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// world is an exact fake-plugin world: one node per provision state of
// interest, written as [[plugin.config.node]] tables.
type worldNode struct {
	uuid, rc, power, provision, instance string
	maintenance                          bool
	traits                               []string
	reserved                             int64
}

func worldTOML(nodes []worldNode, listedInstances map[string]string) string {
	var b strings.Builder
	b.WriteString("[plugin.config]\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "[[plugin.config.node]]\nuuid = %q\nresource_class = %q\npower_state = %q\nprovision_state = %q\n",
			n.uuid, n.rc, n.power, n.provision)
		if n.instance != "" {
			fmt.Fprintf(&b, "instance_uuid = %q\n", n.instance)
		}
		if n.maintenance {
			b.WriteString("maintenance = true\n")
		}
		if len(n.traits) > 0 {
			fmt.Fprintf(&b, "traits = [%q]\n", strings.Join(n.traits, `", "`))
		}
	}
	for inst, node := range listedInstances {
		fmt.Fprintf(&b, "[[plugin.config.instance]]\nuuid = %q\nnode_uuid = %q\n", inst, node)
	}
	return b.String()
}

func uuidFor(test string, i int) string {
	h := 0
	for _, c := range test {
		h = h*31 + int(c)
	}
	return fmt.Sprintf("%08x-0000-4000-8000-%012d", uint32(h), i)
}

func TestEngineOnceAgainstRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	nodes := []worldNode{
		{uuid: u(0), rc: "baremetal-gold", power: "power off", provision: "available", reserved: 0,
			traits: []string{"CUSTOM_GOLD"}},
		{uuid: u(1), rc: "baremetal-gold", power: "power on", provision: "active", instance: u(100), reserved: 1},
		{uuid: u(2), rc: "baremetal.silver", power: "power off", provision: "available", maintenance: true, reserved: 1},
		{uuid: u(3), rc: "baremetal-gold", power: "power off", provision: "manageable", reserved: 1},
		{uuid: u(4), rc: "baremetal-gold", power: "", provision: "available", reserved: 1},
		{uuid: u(5), rc: "baremetal.silver", power: "power off", provision: "available", reserved: 1}, // instance listed only
		{uuid: u(6), rc: "baremetal-gold", power: "power off", provision: "cleaning", reserved: 1},
	}
	listed := map[string]string{u(100): u(1), u(105): u(5)}
	id := fmt.Sprintf("e2e-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, worldTOML(nodes, listed))

	r := once(t, cfg)
	if r.Created != len(nodes) || r.Nodes != len(nodes) || r.Instances != 2 {
		t.Fatalf("first cycle: %+v", r)
	}
	owner := "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_"))
	for _, n := range nodes {
		p, ok := readProvider(t, url, n.uuid)
		if !ok {
			t.Fatalf("provider %s missing from Placement", n.uuid)
		}
		rc := "CUSTOM_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(n.rc))
		want := inventory{Total: 1, Reserved: n.reserved, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
		if p.Name != n.uuid || len(p.Inventories) != 1 || p.Inventories[rc] != want {
			t.Errorf("node %s (%s/%s): provider %+v, want %s=%+v", n.uuid, n.provision, n.power, p, rc, want)
		}
		for _, tr := range append([]string{owner, "COMPUTE_NODE"}, n.traits...) {
			if !slices.Contains(p.Traits, tr) {
				t.Errorf("node %s: traits %v lack %s", n.uuid, p.Traits, tr)
			}
		}
	}

	// Nothing changed: the second run writes nothing and sends one request.
	r = once(t, cfg)
	if r.Created+r.Updated != 0 || r.Unchanged != len(nodes) || r.PlacementRequests != 1 {
		t.Fatalf("second cycle: %+v", r)
	}
	// Without the state cache: reads, still no write.
	os.Remove(filepath.Join(filepath.Dir(cfg), "state.json"))
	r = once(t, cfg)
	if r.Created+r.Updated != 0 || r.Unchanged != len(nodes) {
		t.Fatalf("cold cycle: %+v", r)
	}
}

func TestPlanWritesNothing(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	n := worldNode{uuid: uuidFor(t.Name(), 0), rc: "gold", power: "power on", provision: "available"}
	cfg := writeConfig(t, "plan-e2e", url, plugin, worldTOML([]worldNode{n}, nil))
	res := runEngine(t, "plan", "--config", cfg)
	if res.code != 0 || !strings.Contains(res.stdout, "+ create") || !strings.Contains(res.stdout, n.uuid) {
		t.Fatalf("plan: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, ok := readProvider(t, url, n.uuid); ok {
		t.Fatal("plan created a provider")
	}
}

func TestBadConfigIsNamed(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	cases := map[string]struct{ cfg, want string }{
		"missing plugin": {writeConfig(t, "x", url, "/nonexistent/fake.wasm", ""), "plugin.path"},
		"unknown key":    {writeConfig(t, "x", url, plugin, "[plugin.limits]\ncpu = 1\n"), "plugin.limits.cpu"},
	}
	bad := writeConfig(t, "x", url, plugin, "")
	b, _ := os.ReadFile(bad)
	os.WriteFile(bad, []byte(strings.Replace(string(b), `interval = "5s"`, `interval = "5 seconds"`, 1)), 0o644)
	cases["bad duration"] = struct{ cfg, want string }{bad, "engine.interval"}
	for name, c := range cases {
		for _, verb := range []string{"validate", "once"} {
			res := runEngine(t, verb, "--config", c.cfg)
			if res.code == 0 || !strings.Contains(res.stderr, c.want) {
				t.Errorf("%s / %s: exit %d, stderr %q; want it to name %q", name, verb, res.code, res.stderr, c.want)
			}
		}
	}
	if res := runEngine(t, "validate", "--config", writeConfig(t, "x", url, plugin, "")); res.code != 0 {
		t.Fatalf("a good config fails validate: %s", res.stderr)
	}
}
