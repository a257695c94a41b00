package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestEngineSemanticsAgainstRealPlacement: a provider deleted out of band
// is recreated; a foreign trait survives; a node removed from the world is
// deleted only after two proofs; a provider with allocations never is.
func TestEngineSemanticsAgainstRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	var nodes []worldNode
	for i := range 4 {
		nodes = append(nodes, worldNode{uuid: u(i), rc: "gold", power: "power on", provision: "available"})
	}
	id := fmt.Sprintf("sem-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, worldTOML(nodes, nil))
	if r := once(t, cfg); r.Created != 4 {
		t.Fatalf("first cycle %+v", r)
	}

	// Out of band: delete n1's provider, add an operator's trait to n0,
	// and give n2 an allocation, as the scheduler would.
	if st, b := placementDo(t, url, "DELETE", "/resource_providers/"+u(1), nil); st != 204 {
		t.Fatalf("delete: %d %s", st, b)
	}
	addForeignTrait(t, url, u(0), "CUSTOM_OPERATOR_SET")
	consumer := uuidFor(t.Name(), 900)
	if st, b := placementDo(t, url, "PUT", "/allocations/"+consumer, map[string]any{
		"allocations": map[string]any{u(2): map[string]any{"resources": map[string]int{"CUSTOM_GOLD": 1}}},
		"project_id":  "p", "user_id": "u", "consumer_generation": nil, "consumer_type": "INSTANCE",
	}); st != 204 {
		t.Fatalf("allocate: %d %s", st, b)
	}
	if r := once(t, cfg); r.Created != 1 {
		t.Fatalf("the deleted provider must come back: %+v", r)
	}
	if p, ok := readProvider(t, url, u(1)); !ok || p.Inventories["CUSTOM_GOLD"].Total != 1 {
		t.Fatalf("recreated provider: %+v", p)
	}
	if p, _ := readProvider(t, url, u(0)); !slices.Contains(p.Traits, "CUSTOM_OPERATOR_SET") {
		t.Fatalf("the operator's trait was removed: %v", p.Traits)
	}

	// n2 (with an allocation) and n3 leave the world: the fake plugin then
	// proves them deleted. One proof deletes nothing.
	cfg2 := writeConfig(t, id, url, plugin, worldTOML(nodes[:2], nil))
	copyState(t, cfg, cfg2)
	if r, _ := onceAllowingErrors(t, cfg2); r.Deleted != 0 {
		t.Fatalf("deleted on one proof: %+v", r)
	}
	for _, i := range []int{2, 3} {
		if _, ok := readProvider(t, url, u(i)); !ok {
			t.Fatalf("provider %d deleted on one proof", i)
		}
	}
	r, code := onceAllowingErrors(t, cfg2)
	if r.Deleted != 1 || code == 0 || !strings.Contains(strings.Join(r.ErrorMessages(), "\n"), "has allocations; reserved, not deleted") {
		t.Fatalf("second proof: exit %d, %+v", code, r)
	}
	if _, ok := readProvider(t, url, u(3)); ok {
		t.Fatal("the free provider of a deleted node must be deleted after two proofs")
	}
	p, ok := readProvider(t, url, u(2))
	if !ok || p.Inventories["CUSTOM_GOLD"].Reserved != 1 {
		t.Fatalf("the provider with allocations must stay, reserved: %+v", p)
	}
	var alloc struct {
		Allocations map[string]any `json:"allocations"`
	}
	_, b := placementDo(t, url, "GET", "/allocations/"+consumer, nil)
	if json.Unmarshal(b, &alloc); len(alloc.Allocations) != 1 {
		t.Fatalf("allocation lost: %s", b)
	}
}

func addForeignTrait(t *testing.T, url, uuid, trait string) {
	t.Helper()
	placementDo(t, url, "PUT", "/traits/"+trait, nil)
	var cur struct {
		Gen    json.RawMessage `json:"resource_provider_generation"`
		Traits []string        `json:"traits"`
	}
	_, b := placementDo(t, url, "GET", "/resource_providers/"+uuid+"/traits", nil)
	json.Unmarshal(b, &cur)
	st, b := placementDo(t, url, "PUT", "/resource_providers/"+uuid+"/traits",
		map[string]any{"resource_provider_generation": cur.Gen, "traits": append(cur.Traits, trait)})
	if st != 200 {
		t.Fatalf("add trait: %d %s", st, b)
	}
}

// copyState makes the second config use the first one's state file.
func copyState(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(strings.TrimSuffix(from, "config.toml") + "state.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(strings.TrimSuffix(to, "config.toml")+"state.json", b, 0o644)
	// A few changes since the file was written are in its journal.
	if j, err := os.ReadFile(strings.TrimSuffix(from, "config.toml") + "state.json.journal"); err == nil {
		os.WriteFile(strings.TrimSuffix(to, "config.toml")+"state.json.journal", j, 0o644)
	}
}
