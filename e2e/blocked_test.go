package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestDeletionBlockedByAChildProviderReserves: someone created a child
// provider under ours, so the real Placement refuses the delete (409
// placement.resource_provider.cannot_delete_parent). The node is proven
// gone, so the provider is fully reserved in the cycle that finds it, and
// deleted once the child is gone.
func TestDeletionBlockedByAChildProviderReserves(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	var nodes []worldNode
	for i := range 3 {
		nodes = append(nodes, worldNode{uuid: u(i), rc: "gold", power: "power off", provision: "available"})
	}
	id := fmt.Sprintf("blk-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, worldTOML(nodes, nil))
	if r := once(t, cfg); r.Created != 3 {
		t.Fatalf("first cycle %+v", r)
	}
	child := u(900)
	if st, b := placementDo(t, url, "POST", "/resource_providers", map[string]any{
		"name": "child-of-" + u(2), "uuid": child, "parent_provider_uuid": u(2)}); st != 200 {
		t.Fatalf("create child: %d %s", st, b)
	}
	cfg2 := writeConfig(t, id, url, plugin, worldTOML(nodes[:2], nil))
	copyState(t, cfg, cfg2)
	if r, _ := onceAllowingErrors(t, cfg2); r.Deleted != 0 {
		t.Fatalf("first proof deleted: %+v", r)
	}
	r, code := onceAllowingErrors(t, cfg2)
	if p, ok := readProvider(t, url, u(2)); !ok || p.Inventories["CUSTOM_GOLD"].Reserved != 1 {
		t.Fatalf("blocked delete: provider %+v (exists %v), report %+v", p, ok, r)
	}
	if r.Deleted != 0 || code != 1 || !strings.Contains(strings.Join(r.ErrorMessages(), "\n"), "cannot_delete_parent") {
		t.Fatalf("second proof: exit %d, %+v", code, r)
	}
	if st, b := placementDo(t, url, "DELETE", "/resource_providers/"+child, nil); st != 204 {
		t.Fatalf("delete child: %d %s", st, b)
	}
	if r, _ := onceAllowingErrors(t, cfg2); r.Deleted != 1 {
		t.Fatalf("once the child is gone: %+v", r)
	}
	if _, ok := readProvider(t, url, u(2)); ok {
		t.Fatal("provider still there after the obstacle went")
	}
}
