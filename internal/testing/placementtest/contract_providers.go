package placementtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// listed runs GET /resource_providers?query and returns uuid -> generation,
// checking that every entry has uuid, name and generation.
func (c *client) listed(t *testing.T, query url.Values) map[string]json.Number {
	t.Helper()
	r := c.do(t, "GET", "/resource_providers?"+query.Encode(), nil).expect(t, http.StatusOK)
	rps, ok := r.object(t)["resource_providers"].([]any)
	if !ok {
		t.Fatalf("%s: no resource_providers list: %s", r.what, r.body)
	}
	out := map[string]json.Number{}
	for _, x := range rps {
		rp, _ := x.(map[string]any)
		uuid, _ := rp["uuid"].(string)
		name, _ := rp["name"].(string)
		gen, ok := rp["generation"].(json.Number)
		if uuid == "" || name == "" || !ok {
			t.Fatalf("%s: incomplete entry %v", r.what, rp)
		}
		out[uuid] = gen
	}
	return out
}

func onlyThese(t *testing.T, what string, got map[string]json.Number, want ...string) {
	t.Helper()
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("%s: got providers %v, want %v", what, keys, want)
	}
}

func contractList(t *testing.T, c *client) {
	trait := customName("LIST")
	c.do(t, "PUT", "/traits/"+trait, nil).expect(t, http.StatusCreated)
	u1, _, g1 := c.provider(t)
	u2, n2, _ := c.provider(t)
	r := c.do(t, "PUT", "/resource_providers/"+u1+"/traits",
		map[string]any{"resource_provider_generation": g1, "traits": []string{trait}}).expect(t, http.StatusOK)
	g1 = r.gen(t, "resource_provider_generation")

	all := c.listed(t, nil)
	if all[u1] != g1 || all[u2] == "" {
		t.Errorf("full list: %s -> %q (want %s), %s -> %q", u1, all[u1], g1, u2, all[u2])
	}
	onlyThese(t, "?uuid=", c.listed(t, url.Values{"uuid": {u1}}), u1)
	onlyThese(t, "?name=", c.listed(t, url.Values{"name": {n2}}), u2)
	onlyThese(t, "?required=", c.listed(t, url.Values{"required": {trait}}), u1)
	onlyThese(t, "?required=!", c.listed(t, url.Values{"required": {"!" + trait}, "uuid": {u2}}), u2)
	onlyThese(t, "?required=! excludes", c.listed(t, url.Values{"required": {"!" + trait}, "uuid": {u1}}))

	c.do(t, "GET", "/resource_providers?uuid=not-a-uuid", nil).apiError(t, http.StatusBadRequest, "placement.undefined_code")
	c.do(t, "GET", "/resource_providers?required="+customName("UNDEFINED"), nil).
		apiError(t, http.StatusBadRequest, "placement.undefined_code")
	c.do(t, "GET", "/resource_providers?bogus=1", nil).apiError(t, http.StatusBadRequest, "placement.undefined_code")
}

func contractRename(t *testing.T, c *client) {
	uuid, _, gen := c.provider(t)
	name := "contract-" + uniq(8)
	r := c.do(t, "PUT", "/resource_providers/"+uuid, map[string]any{"name": name}).expect(t, http.StatusOK)
	if r.object(t)["name"] != name {
		t.Errorf("rename: %s", r.body)
	}
	same(t, gen, r.gen(t, "generation"), "a rename takes no generation and does not bump it")

	_, other, _ := c.provider(t)
	c.do(t, "PUT", "/resource_providers/"+uuid, map[string]any{"name": other}).
		apiError(t, http.StatusConflict, "placement.duplicate_name")
	c.do(t, "PUT", "/resource_providers/"+newUUID(), map[string]any{"name": "contract-" + uniq(8)}).
		apiError(t, http.StatusNotFound, "placement.undefined_code")
}

func contractDelete(t *testing.T, c *client) {
	uuid, _, gen := c.provider(t)
	// Inventory and aggregates do not block a delete; allocations do
	// (see the allocations subtest).
	rc := c.class(t)
	r := c.do(t, "PUT", "/resource_providers/"+uuid+"/inventories", inventories(gen, rc, 4, 0)).expect(t, http.StatusOK)
	gen = r.gen(t, "resource_provider_generation")
	c.do(t, "PUT", "/resource_providers/"+uuid+"/aggregates",
		map[string]any{"resource_provider_generation": gen, "aggregates": []string{newUUID()}}).expect(t, http.StatusOK)

	r = c.do(t, "DELETE", "/resource_providers/"+uuid, nil).expect(t, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("DELETE 204 with a body: %q", r.body)
	}
	c.do(t, "GET", "/resource_providers/"+uuid, nil).apiError(t, http.StatusNotFound, "placement.undefined_code")
	c.do(t, "DELETE", "/resource_providers/"+uuid, nil).apiError(t, http.StatusNotFound, "placement.undefined_code")
}

func contractClasses(t *testing.T, c *client) {
	rc := customName("RC")
	c.do(t, "PUT", "/resource_classes/"+rc, nil).expect(t, http.StatusCreated)
	c.do(t, "PUT", "/resource_classes/"+rc, nil).expect(t, http.StatusNoContent)
	c.do(t, "GET", "/resource_classes/"+rc, nil).expect(t, http.StatusOK)
	// Only CUSTOM_ names can be created; standard ones already exist.
	c.do(t, "PUT", "/resource_classes/contract_lower", nil).apiError(t, http.StatusBadRequest, "placement.undefined_code")
	c.do(t, "PUT", "/resource_classes/VCPU", nil).apiError(t, http.StatusBadRequest, "placement.undefined_code")
}
