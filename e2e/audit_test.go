package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

type auditFinding struct{ Kind, Node, Detail string }

func audit(t *testing.T, cfg string) ([]auditFinding, int) {
	t.Helper()
	res := runEngine(t, "audit", "--config", cfg, "--json")
	var r struct{ Findings []auditFinding }
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("audit: exit %d, %v\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	return r.Findings, res.code
}

// generation reads a provider's generation, for a planted write.
func generation(t *testing.T, url, uuid string) int {
	t.Helper()
	var rp struct{ Generation int }
	if code := placementGet(t, url, "/resource_providers/"+uuid, &rp); code != 200 {
		t.Fatalf("provider %s: %d", uuid, code)
	}
	return rp.Generation
}

func plant(t *testing.T, url, method, path string, body any) {
	t.Helper()
	if code, b := placementDo(t, url, method, path, body); code >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
}

// `engine audit` against the real Placement: 0 on a clean fleet, then 3
// with each planted drift named once, and nothing written.
func TestAuditFindsPlantedDrift(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	agg := "5d3c1e0a-0000-4000-8000-000000000001"
	var nodes []worldNode
	for i := range 7 {
		nodes = append(nodes, worldNode{uuid: u(i), rc: "gold", power: "power off", provision: "available"})
	}
	nodes[2].provision = "cleaning" // reserved
	id := fmt.Sprintf("audit-%x", os.Getpid())
	config := func(ns []worldNode) string {
		cfg := writeConfig(t, id, url, plugin, worldTOML(ns, nil))
		b, _ := os.ReadFile(cfg)
		text := strings.Replace(string(b), "marker_traits", fmt.Sprintf("aggregates = [%q]\nmarker_traits", agg), 1)
		os.WriteFile(cfg, []byte(text), 0o644)
		return cfg
	}
	cfg := config(nodes)
	once(t, cfg)
	if fs, code := audit(t, cfg); code != 0 || len(fs) != 0 {
		t.Fatalf("clean fleet: exit %d, %+v", code, fs)
	}
	owner := "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_"))
	inv := func(total, reserved int) map[string]any {
		return map[string]any{"total": total, "reserved": reserved, "min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1}
	}
	plant(t, url, "PUT", "/resource_providers/"+u(0)+"/inventories", map[string]any{
		"resource_provider_generation": generation(t, url, u(0)), "inventories": map[string]any{"CUSTOM_GOLD": inv(2, 0)}})
	plant(t, url, "PUT", "/resource_providers/"+u(2)+"/inventories", map[string]any{
		"resource_provider_generation": generation(t, url, u(2)), "inventories": map[string]any{"CUSTOM_GOLD": inv(1, 0)}})
	plant(t, url, "PUT", "/resource_providers/"+u(3)+"/traits", map[string]any{
		"resource_provider_generation": generation(t, url, u(3)), "traits": []string{owner}})
	plant(t, url, "PUT", "/resource_providers/"+u(4)+"/aggregates", map[string]any{
		"resource_provider_generation": generation(t, url, u(4)), "aggregates": []string{}})
	plant(t, url, "PUT", "/allocations/"+u(105), map[string]any{
		"allocations": map[string]any{u(5): map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"})
	// Another engine's provider for a new node, a new node with none, a
	// node the source no longer lists, and one it reports unusably.
	other := "CUSTOM_RPENGINE_OWNER_SOMEONE_ELSE"
	plant(t, url, "PUT", "/traits/"+other, nil)
	plant(t, url, "POST", "/resource_providers", map[string]any{"uuid": u(7), "name": u(7)})
	plant(t, url, "PUT", "/resource_providers/"+u(7)+"/traits", map[string]any{"resource_provider_generation": generation(t, url, u(7)), "traits": []string{other}})
	ns := append(nodes[:6:6],
		worldNode{uuid: u(7), rc: "gold", power: "power off", provision: "available"},
		worldNode{uuid: u(8), rc: "gold", power: "power off", provision: "available"},
		worldNode{uuid: u(9), rc: "", power: "power off", provision: "available"})
	cfg = config(ns) // node 6 is gone
	before := generation(t, url, u(0))

	fs, code := audit(t, cfg)
	var got []string
	for _, f := range fs {
		got = append(got, f.Kind+" "+f.Node)
	}
	sort.Strings(got)
	want := []string{"aggregates " + u(4), "foreign_consumer " + u(5), "inventory " + u(0), "no_node " + u(6),
		"no_provider " + u(8), "ownership " + u(7), "quarantined " + u(9), "reserved " + u(2), "traits " + u(3)}
	if code != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d; findings\n%s\nwant\n%s\n%+v", code, strings.Join(got, "\n"), strings.Join(want, "\n"), fs)
	}
	if generation(t, url, u(0)) != before {
		t.Error("audit wrote to Placement")
	}
	if _, ok := readProvider(t, url, u(8)); ok {
		t.Error("audit created a provider")
	}
	res := runEngine(t, "audit", "--config", cfg)
	t.Logf("engine audit:\n%s", res.stdout)
	if res.code != 3 || !strings.Contains(res.stdout, "reserved") || !strings.Contains(res.stdout, "9 drifts found") {
		t.Errorf("text: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// retiredWorld is the fake plugin's [plugin.config] of one available,
// powered-on gold node per flag, node i retired as flags[i] says: the
// retired ones are the nodes the rules reserve (held beside nova).
func retiredWorld(u func(int) string, flags ...bool) string {
	var world strings.Builder
	world.WriteString("[plugin.config]\n")
	for i, retired := range flags {
		fmt.Fprintf(&world, "[[plugin.config.node]]\nuuid = %q\nresource_class = \"gold\"\npower_state = \"power on\"\n"+
			"provision_state = \"available\"\nretired = %v\n", u(i), retired)
	}
	return world.String()
}

// Beside nova, holds against the real Placement: audit is 0 with the
// holds in place, then names a held node whose hold was deleted and a
// hold on a node nothing reserves, even when the two leave the hold
// project's usage sum as it was (the cycle's cheap check sees no change).
func TestAuditFindsHoldDrift(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	world := retiredWorld(u, false, true, true, false)
	id := fmt.Sprintf("audit-hold-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, world+"\n[nova]\nbeside = true\n")
	once(t, cfg)
	owner := engine.OwnerTrait(id)
	for i, held := range []bool{false, true, true, false} {
		st, _ := placementDo(t, url, "GET", "/allocations/"+engine.HoldConsumer(owner, u(i)), nil)
		var a struct{ Allocations map[string]any }
		placementGet(t, url, "/allocations/"+engine.HoldConsumer(owner, u(i)), &a)
		if st != 200 || (len(a.Allocations) > 0) != held {
			t.Fatalf("node %d: hold %v, want %v", i, a.Allocations, held)
		}
	}
	if fs, code := audit(t, cfg); code != 0 || len(fs) != 0 {
		t.Fatalf("holds in place: exit %d, %+v", code, fs)
	}
	plant(t, url, "DELETE", "/allocations/"+engine.HoldConsumer(owner, u(1)), nil)
	hold := "rpengine-hold-" + id
	plant(t, url, "PUT", "/allocations/"+engine.HoldConsumer(owner, u(3)), map[string]any{
		"allocations": map[string]any{u(3): map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  hold, "user_id": hold, "consumer_generation": nil, "consumer_type": engine.HoldConsumerType})
	before := generation(t, url, u(3))
	fs, code := audit(t, cfg)
	var got []string
	for _, f := range fs {
		got = append(got, f.Kind+" "+f.Node+": "+f.Detail)
	}
	sort.Strings(got)
	want := []string{"hold " + u(1) + ": hold missing", "hold " + u(3) + ": hold without a reason"}
	if code != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d; findings\n%s\nwant\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if generation(t, url, u(3)) != before {
		t.Error("audit wrote to Placement")
	}
}
