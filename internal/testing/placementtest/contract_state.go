package placementtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// inventories is a PUT .../inventories body with one class; total 0 means
// an empty inventory.
func inventories(gen json.Number, rc string, total, reserved int) map[string]any {
	inv := map[string]any{}
	if total > 0 {
		inv[rc] = map[string]any{"total": total, "reserved": reserved}
	}
	return map[string]any{"resource_provider_generation": gen, "inventories": inv}
}

func contractInventories(t *testing.T, c *client) {
	rc := c.class(t)
	uuid, _, g0 := c.provider(t)
	path := "/resource_providers/" + uuid + "/inventories"

	r := c.do(t, "PUT", path, inventories(g0, rc, 1, 0)).expect(t, http.StatusOK)
	g1 := r.gen(t, "resource_provider_generation")
	changed(t, g0, g1)
	inv, _ := r.object(t)["inventories"].(map[string]any)
	got, _ := inv[rc].(map[string]any)
	// Omitted fields get these defaults.
	for k, want := range map[string]float64{"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 2147483647, "step_size": 1, "allocation_ratio": 1} {
		n, _ := got[k].(json.Number)
		if f, err := n.Float64(); err != nil || f != want {
			t.Errorf("inventory %s = %v, want %v", k, got[k], want)
		}
	}
	same(t, g1, c.do(t, "GET", path, nil).expect(t, http.StatusOK).gen(t, "resource_provider_generation"), "GET inventories")

	c.do(t, "PUT", path, inventories(g0, rc, 1, 0)).apiError(t, http.StatusConflict, "placement.concurrent_update")
	r = c.do(t, "PUT", path, inventories(g1, customName("UNDEFINED"), 1, 0))
	r.apiError(t, http.StatusBadRequest, "placement.undefined_code")
	if !strings.Contains(r.detail(t), "No such resource class") {
		t.Errorf("undefined class detail: %q", r.detail(t))
	}
	same(t, g1, c.currentGen(t, uuid), "failed writes do not bump")

	// An identical PUT still bumps: compare before writing.
	g2 := c.do(t, "PUT", path, inventories(g1, rc, 1, 0)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g1, g2)
	// reserved == total is valid from 1.26; reserved > total is not.
	g3 := c.do(t, "PUT", path, inventories(g2, rc, 1, 1)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g2, g3)
	c.do(t, "PUT", path, inventories(g3, rc, 1, 2)).apiError(t, http.StatusBadRequest, "placement.undefined_code")
	c.do(t, "PUT", path, map[string]any{"inventories": map[string]any{}}).apiError(t, http.StatusBadRequest, "placement.undefined_code")

	r = c.do(t, "PUT", path, inventories(g3, rc, 0, 0)).expect(t, http.StatusOK)
	g4 := r.gen(t, "resource_provider_generation")
	changed(t, g3, g4)
	if inv, _ := r.object(t)["inventories"].(map[string]any); len(inv) != 0 {
		t.Errorf("PUT {} left inventory: %s", r.body)
	}
	// Even an empty PUT on an empty provider bumps.
	g5 := c.do(t, "PUT", path, inventories(g4, rc, 0, 0)).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g4, g5)
}

func contractTraits(t *testing.T, c *client) {
	trait := customName("TRAIT")
	c.do(t, "PUT", "/traits/"+trait, nil).expect(t, http.StatusCreated)
	c.do(t, "PUT", "/traits/"+trait, nil).expect(t, http.StatusNoContent)
	c.do(t, "PUT", "/traits/contract_lower", nil).apiError(t, http.StatusBadRequest, "placement.undefined_code")

	uuid, _, g0 := c.provider(t)
	path := "/resource_providers/" + uuid + "/traits"
	put := func(gen json.Number, traits ...string) reply {
		return c.do(t, "PUT", path, map[string]any{"resource_provider_generation": gen, "traits": append([]string{}, traits...)})
	}
	r := put(g0, trait).expect(t, http.StatusOK)
	g1 := r.gen(t, "resource_provider_generation")
	changed(t, g0, g1)
	if got, _ := r.object(t)["traits"].([]any); !slices.Equal(got, []any{trait}) {
		t.Errorf("PUT traits: %s", r.body)
	}
	// An identical set does not bump (the server returns early)...
	same(t, g1, put(g1, trait).expect(t, http.StatusOK).gen(t, "resource_provider_generation"), "identical trait set")
	// ...but the generation is still checked first.
	put(g0, trait).apiError(t, http.StatusConflict, "placement.concurrent_update")
	r = put(g1, customName("UNDEFINED"))
	r.apiError(t, http.StatusBadRequest, "placement.undefined_code")
	if !strings.Contains(r.detail(t), "No such trait") {
		t.Errorf("undefined trait detail: %q", r.detail(t))
	}
	g2 := put(g1).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g1, g2)
	r = c.do(t, "GET", path, nil).expect(t, http.StatusOK)
	same(t, g2, r.gen(t, "resource_provider_generation"), "GET traits")
	if got, _ := r.object(t)["traits"].([]any); len(got) != 0 {
		t.Errorf("GET traits after clearing: %s", r.body)
	}
}

func contractAggregates(t *testing.T, c *client) {
	uuid, _, g0 := c.provider(t)
	path := "/resource_providers/" + uuid + "/aggregates"
	agg := newUUID()
	put := func(gen json.Number) reply {
		return c.do(t, "PUT", path, map[string]any{"resource_provider_generation": gen, "aggregates": []string{agg}})
	}
	r := put(g0).expect(t, http.StatusOK)
	g1 := r.gen(t, "resource_provider_generation")
	changed(t, g0, g1)
	if got, _ := r.object(t)["aggregates"].([]any); !slices.Equal(got, []any{agg}) {
		t.Errorf("PUT aggregates: %s", r.body)
	}
	// Unlike traits, an identical aggregate set bumps.
	g2 := put(g1).expect(t, http.StatusOK).gen(t, "resource_provider_generation")
	changed(t, g1, g2)
	put(g1).apiError(t, http.StatusConflict, "placement.concurrent_update")
	c.do(t, "PUT", path, map[string]any{"aggregates": []string{agg}}).apiError(t, http.StatusBadRequest, "placement.undefined_code")
	r = c.do(t, "GET", path, nil).expect(t, http.StatusOK)
	same(t, g2, r.gen(t, "resource_provider_generation"), "GET aggregates")
	if got, _ := r.object(t)["aggregates"].([]any); !slices.Equal(got, []any{agg}) {
		t.Errorf("GET aggregates: %s", r.body)
	}
}
