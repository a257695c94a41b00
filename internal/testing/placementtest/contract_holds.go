package placementtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// contractHolds is what a hold beside nova relies on (engine/hold.go): a
// consumer of another type uses the unit, capacity is refused to a second
// consumer, GET /usages sums a project's consumers by type (1.38), and
// reserving the whole unit under the allocation is allowed.
func contractHolds(t *testing.T, c *client) {
	rc := c.class(t)
	uuid, _, g0 := c.provider(t)
	invPath := "/resource_providers/" + uuid + "/inventories"
	g1 := c.do(t, "PUT", invPath, inventories(g0, rc, 1, 0)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")

	hold, project := newUUID(), "hold-"+uniq(8)
	body := allocation(uuid, rc, 1, nil, project)
	body["consumer_type"] = "RPENGINE_HOLD"
	c.do(t, "PUT", "/allocations/"+hold, body).expect(t, http.StatusNoContent)
	// A second consumer (an instance) finds no capacity.
	c.do(t, "PUT", "/allocations/"+newUUID(), allocation(uuid, rc, 1, nil, newUUID())).expect(t, http.StatusConflict)

	r := c.do(t, "GET", "/usages?project_id="+project, nil).expect(t, http.StatusOK)
	var u struct {
		Usages map[string]map[string]json.Number `json:"usages"`
	}
	if err := json.Unmarshal(r.body, &u); err != nil {
		t.Fatalf("GET /usages: %v: %s", err, r.body)
	}
	if u.Usages["RPENGINE_HOLD"][rc] != "1" || u.Usages["RPENGINE_HOLD"]["consumer_count"] != "1" || len(u.Usages) != 1 {
		t.Errorf("GET /usages?project_id: %s", r.body)
	}
	// Another writer (nova) reserving the unit under the hold is allowed.
	g2 := c.currentGen(t, uuid)
	changed(t, g1, g2)
	c.do(t, "PUT", invPath, inventories(g2, rc, 1, 1)).expect(t, http.StatusOK)
	c.do(t, "DELETE", "/allocations/"+hold, nil).expect(t, http.StatusNoContent)
	r = c.do(t, "GET", "/usages?project_id="+project, nil).expect(t, http.StatusOK)
	u.Usages = nil
	if err := json.Unmarshal(r.body, &u); err != nil || len(u.Usages) != 0 {
		t.Errorf("GET /usages after the release: %s", r.body)
	}
}
