package e2e

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// placementWrites counts the writes in the real Placement's own log (its
// requestlog lines whose method is not GET): what any client sent it.
func placementWrites(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, sc := 0, bufio.NewScanner(f)
	for sc.Scan() {
		if m := placementLine.FindStringSubmatch(sc.Text()); m != nil && m[3] != "GET" && m[3] != "HEAD" {
			n++
		}
	}
	return n
}

// auditNoWrites runs `engine audit --json` and fails if Placement's own
// log shows any write during it.
func auditNoWrites(t *testing.T, cfg, plog string) ([]auditFinding, int) {
	t.Helper()
	before := placementWrites(t, plog)
	fs, code := audit(t, cfg)
	if n := placementWrites(t, plog) - before; n != 0 {
		t.Errorf("audit wrote to Placement: %d writes in its log", n)
	}
	return fs, code
}

// `engine audit` against the real Ironic and the real Placement: 0 on a
// clean fleet (an instance's allocation is no drift), then 3 with each
// drift planted in either service named once, and no write in
// Placement's log.
func TestAuditIronicFindsPlantedDrift(t *testing.T) {
	url, plog := placementtest.StartRealLogged(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	gold := "baremetal-gold"
	node := func(name string) string {
		u := c.Create(t, ironictest.Spec{Name: name, ResourceClass: gold})
		c.Available(t, u)
		return u
	}
	inv, res, traits, aggs, foreign, gone, clean, used := node("inv"), node("res"), node("traits"),
		node("aggs"), node("foreign"), node("gone"), node("clean"), node("used")
	c.Traits(t, traits, []string{"CUSTOM_FAST"})
	agg := "5d3c1e0a-0000-4000-8000-000000000002"
	id := fmt.Sprintf("audit-ironic-%x", os.Getpid())
	cfg := ironicConfig(t, id, url, plugin, ironicURL, "", "")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "marker_traits", fmt.Sprintf("aggregates = [%q]\nmarker_traits", agg), 1)), 0o644)
	once(t, cfg)
	// An instance lands on "used": its allocation is no drift.
	instance := "a2222222-0000-4000-8000-000000000001"
	plant(t, url, "PUT", "/allocations/"+instance, map[string]any{
		"allocations": map[string]any{used: map[string]any{"resources": map[string]int{"CUSTOM_BAREMETAL_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"})
	c.SetInstance(t, used, instance)
	once(t, cfg)
	if fs, code := auditNoWrites(t, cfg, plog); code != 0 || len(fs) != 0 {
		t.Fatalf("clean fleet: exit %d, %+v", code, fs)
	}

	// Drift in Placement...
	invBody := func(total, reserved int) map[string]any {
		return map[string]any{"CUSTOM_BAREMETAL_GOLD": map[string]any{"total": total, "reserved": reserved,
			"min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1}}
	}
	plant(t, url, "PUT", "/resource_providers/"+inv+"/inventories", map[string]any{
		"resource_provider_generation": generation(t, url, inv), "inventories": invBody(2, 0)})
	plant(t, url, "PUT", "/resource_providers/"+res+"/inventories", map[string]any{
		"resource_provider_generation": generation(t, url, res), "inventories": invBody(1, 1)})
	plant(t, url, "PUT", "/resource_providers/"+traits+"/traits", map[string]any{
		"resource_provider_generation": generation(t, url, traits), "traits": []string{engine.OwnerTrait(id), "COMPUTE_NODE"}})
	plant(t, url, "PUT", "/resource_providers/"+aggs+"/aggregates", map[string]any{
		"resource_provider_generation": generation(t, url, aggs), "aggregates": []string{}})
	stranger := "a2222222-0000-4000-8000-000000000002"
	plant(t, url, "PUT", "/allocations/"+stranger, map[string]any{
		"allocations": map[string]any{foreign: map[string]any{"resources": map[string]int{"CUSTOM_BAREMETAL_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE"})
	// ...and in Ironic: a node deleted, a new one, a new one whose uuid
	// another engine's provider holds, and one without a resource class.
	c.Delete(t, gone)
	fresh := node("fresh")
	taken := node("taken")
	other := "CUSTOM_RPENGINE_OWNER_SOMEONE_ELSE"
	plant(t, url, "PUT", "/traits/"+other, nil)
	plant(t, url, "POST", "/resource_providers", map[string]any{"uuid": taken, "name": taken})
	plant(t, url, "PUT", "/resource_providers/"+taken+"/traits", map[string]any{
		"resource_provider_generation": generation(t, url, taken), "traits": []string{other}})
	classless := c.Create(t, ironictest.Spec{Name: "classless"})
	c.Available(t, classless)

	fs, code := auditNoWrites(t, cfg, plog)
	var got []string
	for _, f := range fs {
		got = append(got, f.Kind+" "+f.Node)
	}
	sort.Strings(got)
	want := []string{"aggregates " + aggs, "foreign_consumer " + foreign, "inventory " + inv, "no_node " + gone,
		"no_provider " + fresh, "ownership " + taken, "quarantined " + classless, "reserved " + res, "traits " + traits}
	sort.Strings(want)
	if code != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d; findings\n%s\nwant\n%s\n%+v", code, strings.Join(got, "\n"), strings.Join(want, "\n"), fs)
	}
	for _, f := range fs {
		if f.Node == foreign && !strings.Contains(f.Detail, stranger) || f.Node == used || f.Node == clean {
			t.Errorf("finding %+v", f)
		}
	}
	// Audit keeps nothing: the text form, run again, says the same.
	out := runEngine(t, "audit", "--config", cfg)
	t.Logf("engine audit:\n%s", out.stdout)
	if out.code != 3 || !strings.Contains(out.stdout, "10 nodes, 9 drifts found") || !strings.Contains(out.stdout, "proof 1 of 2") {
		t.Errorf("text: exit %d\n%s\n%s", out.code, out.stdout, out.stderr)
	}
}
