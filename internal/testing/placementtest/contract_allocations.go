package placementtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// allocation is a 1.38 PUT /allocations/{consumer} body.
func allocation(provider, rc string, used int, consumerGen any, project string) map[string]any {
	return map[string]any{
		"allocations":         map[string]any{provider: map[string]any{"resources": map[string]any{rc: used}}},
		"project_id":          project,
		"user_id":             project,
		"consumer_generation": consumerGen, // nil: a new consumer
		"consumer_type":       "INSTANCE",
	}
}

func contractAllocations(t *testing.T, c *client) {
	rc := c.class(t)
	uuid, _, g0 := c.provider(t)
	invPath := "/resource_providers/" + uuid + "/inventories"
	g1 := c.do(t, "PUT", invPath, inventories(g0, rc, 1, 0)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")

	consumer, project := newUUID(), newUUID()
	c.do(t, "PUT", "/allocations/"+consumer, allocation(uuid, rc, 1, nil, project)).expect(t, http.StatusNoContent)
	g2 := c.currentGen(t, uuid)
	changed(t, g1, g2) // an allocation is a write to the provider: reconcilers see 409s from it

	r := c.do(t, "GET", "/allocations/"+consumer, nil).expect(t, http.StatusOK)
	m := r.object(t)
	allocs, _ := m["allocations"].(map[string]any)
	mine, _ := allocs[uuid].(map[string]any)
	res, _ := mine["resources"].(map[string]any)
	if res[rc] != json.Number("1") || m["consumer_type"] != "INSTANCE" || m["project_id"] != project {
		t.Errorf("GET allocations: %s", r.body)
	}
	if _, ok := m["consumer_generation"].(json.Number); !ok {
		t.Errorf("GET allocations: no consumer_generation: %s", r.body)
	}
	r = c.do(t, "GET", "/resource_providers/"+uuid+"/usages", nil).expect(t, http.StatusOK)
	same(t, g2, r.gen(t, "resource_provider_generation"), "GET usages")
	if u, _ := r.object(t)["usages"].(map[string]any); u[rc] != json.Number("1") {
		t.Errorf("usages: %s", r.body)
	}

	// The consumer exists now, so "null" is a stale consumer generation.
	c.do(t, "PUT", "/allocations/"+consumer, allocation(uuid, rc, 1, nil, project)).
		apiError(t, http.StatusConflict, "placement.concurrent_update")
	c.do(t, "DELETE", "/resource_providers/"+uuid, nil).
		apiError(t, http.StatusConflict, "placement.resource_provider.inuse")
	// Removing an allocated class is refused; reserving all of it is not.
	c.do(t, "PUT", invPath, inventories(g2, rc, 0, 0)).
		apiError(t, http.StatusConflict, "placement.inventory.inuse")
	g3 := c.do(t, "PUT", invPath, inventories(g2, rc, 1, 1)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g2, g3)

	// DELETE /allocations does not bump the provider generation.
	c.do(t, "DELETE", "/allocations/"+consumer, nil).expect(t, http.StatusNoContent)
	same(t, g3, c.currentGen(t, uuid), "DELETE /allocations/{consumer}")
	c.do(t, "DELETE", "/allocations/"+consumer, nil).apiError(t, http.StatusNotFound, "placement.undefined_code")
	r = c.do(t, "GET", "/allocations/"+consumer, nil).expect(t, http.StatusOK)
	if a, _ := r.object(t)["allocations"].(map[string]any); len(a) != 0 {
		t.Errorf("GET allocations after DELETE: %s", r.body)
	}
	c.do(t, "DELETE", "/resource_providers/"+uuid, nil).expect(t, http.StatusNoContent)
}
