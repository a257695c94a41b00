package placementtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// RunContract checks, as subtests, the Placement behaviour the engine
// relies on, against the server at baseURL (no trailing slash needed).
// Every expectation was observed on the real Placement 8.0. The suite only
// creates uniquely named objects, so it can share a server with other tests.
func RunContract(t *testing.T, baseURL string) {
	c := newClient(baseURL)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *client)
	}{
		{"versions", contractVersions},
		{"auth", contractAuth},
		{"create provider", contractCreate},
		{"duplicate uuid or name", contractDuplicates},
		{"error shape", contractErrors},
		{"list and filters", contractList},
		{"rename keeps generation", contractRename},
		{"resource classes", contractClasses},
		{"inventories", contractInventories},
		{"traits", contractTraits},
		{"aggregates", contractAggregates},
		{"allocations", contractAllocations},
		{"holds beside nova", contractHolds},
		{"delete provider", contractDelete},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// provider creates a uniquely named provider and returns its uuid, name
// and first generation.
func (c *client) provider(t *testing.T) (uuid, name string, gen json.Number) {
	t.Helper()
	uuid, name = newUUID(), "contract-"+uniq(8)
	r := c.do(t, "POST", "/resource_providers", map[string]any{"uuid": uuid, "name": name}).expect(t, http.StatusOK)
	return uuid, name, r.gen(t, "generation")
}

// class defines a new custom resource class.
func (c *client) class(t *testing.T) string {
	t.Helper()
	rc := customName("RC")
	c.do(t, "PUT", "/resource_classes/"+rc, nil).expect(t, http.StatusCreated)
	return rc
}

// currentGen reads a provider's generation.
func (c *client) currentGen(t *testing.T, uuid string) json.Number {
	t.Helper()
	return c.do(t, "GET", "/resource_providers/"+uuid, nil).expect(t, http.StatusOK).gen(t, "generation")
}

// changed asserts that a write answered with a generation other than the
// one it sent. It never assumes how generations move.
func changed(t *testing.T, sent, got json.Number) {
	t.Helper()
	if got == sent {
		t.Fatalf("generation %s did not change on a write that must bump it", sent)
	}
}

func same(t *testing.T, want, got json.Number, why string) {
	t.Helper()
	if got != want {
		t.Fatalf("generation %s, want %s unchanged: %s", got, want, why)
	}
}

func contractVersions(t *testing.T, c *client) {
	r := c.do(t, "GET", "/", nil, noToken).expect(t, http.StatusOK)
	vs, _ := r.object(t)["versions"].([]any)
	if len(vs) != 1 {
		t.Fatalf("GET /: want one version: %s", r.body)
	}
	v, _ := vs[0].(map[string]any)
	for k, want := range map[string]string{"id": "v1.0", "max_version": "1.39", "min_version": "1.0", "status": "CURRENT"} {
		if v[k] != want {
			t.Errorf("GET /: %s = %v, want %s", k, v[k], want)
		}
	}

	missing := "/resource_providers?name=contract-missing-" + uniq(8)
	for _, ver := range []string{"1.39", "latest"} {
		r = c.do(t, "GET", missing, nil, version(ver)).expect(t, http.StatusOK)
		if got := r.header.Get("Openstack-Api-Version"); got != "placement 1.39" {
			t.Errorf("version %s: openstack-api-version %q, want placement 1.39", ver, got)
		}
	}

	// Above the maximum: 406 naming the range, and no code (the version
	// was never accepted, so the 1.23 rule cannot apply).
	r = c.do(t, "GET", missing, nil, version("1.40")).expect(t, http.StatusNotAcceptable)
	errs, _ := r.object(t)["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("406: %s", r.body)
	}
	e, _ := errs[0].(map[string]any)
	if e["max_version"] != "1.39" || e["min_version"] != "1.0" {
		t.Errorf("406: max/min %v/%v, want 1.39/1.0", e["max_version"], e["min_version"])
	}
	if _, ok := e["code"]; ok {
		t.Errorf("406: unexpected code: %s", r.body)
	}
}

func contractAuth(t *testing.T, c *client) {
	// 401 is written by the auth middleware and has its own shape.
	r := c.do(t, "GET", "/resource_providers", nil, noToken).expect(t, http.StatusUnauthorized)
	m := r.object(t)
	if m["title"] != "Unauthorized" || m["code"] != "401 Unauthorized" {
		t.Errorf("401 body: %s", r.body)
	}
	if r.header.Get("X-Openstack-Request-Id") == "" {
		t.Errorf("401 without x-openstack-request-id")
	}
	// noauth2: any other token is a user without the admin role.
	r = c.do(t, "GET", "/resource_providers", nil, header{"X-Auth-Token", "not-admin"})
	e := r.apiError(t, http.StatusForbidden, "placement.undefined_code")
	if d, _ := e["detail"].(string); !strings.Contains(d, "Policy does not allow placement:resource_providers:list") {
		t.Errorf("403 detail: %q", d)
	}
}

func contractCreate(t *testing.T, c *client) {
	uuid, name := newUUID(), "contract-"+uniq(8)
	r := c.do(t, "POST", "/resource_providers", map[string]any{"uuid": uuid, "name": name}).expect(t, http.StatusOK)
	m := r.object(t)
	if m["uuid"] != uuid || m["name"] != name || m["root_provider_uuid"] != uuid {
		t.Errorf("POST 1.39 body: %s", r.body)
	}
	if parent, ok := m["parent_provider_uuid"]; !ok || parent != nil {
		t.Errorf("POST 1.39: parent_provider_uuid should be present and null: %s", r.body)
	}
	gen := r.gen(t, "generation")
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/resource_providers/"+uuid) {
		t.Errorf("POST 1.39: Location %q", loc)
	}
	same(t, gen, c.currentGen(t, uuid), "GET after POST")

	// Before 1.20: 201, a Location, no body.
	uuid2 := newUUID()
	r = c.do(t, "POST", "/resource_providers", map[string]any{"uuid": uuid2, "name": "contract-" + uniq(8)}, version("1.19"))
	r.expect(t, http.StatusCreated)
	if len(r.body) != 0 || !strings.HasSuffix(r.header.Get("Location"), "/resource_providers/"+uuid2) {
		t.Errorf("POST 1.19: body %q, Location %q", r.body, r.header.Get("Location"))
	}

	// Without a uuid the server picks one.
	r = c.do(t, "POST", "/resource_providers", map[string]any{"name": "contract-" + uniq(8)}).expect(t, http.StatusOK)
	if u, _ := r.object(t)["uuid"].(string); len(u) != 36 {
		t.Errorf("POST without uuid: %s", r.body)
	}
}

func contractDuplicates(t *testing.T, c *client) {
	uuid, name, _ := c.provider(t)
	r := c.do(t, "POST", "/resource_providers", map[string]any{"uuid": uuid, "name": "contract-" + uniq(8)})
	r.apiError(t, http.StatusConflict, "placement.duplicate_name")
	if d := r.detail(t); !strings.Contains(d, "Conflicting resource provider uuid: "+uuid+" already exists.") {
		t.Errorf("duplicate uuid detail: %q", d)
	}
	r = c.do(t, "POST", "/resource_providers", map[string]any{"uuid": newUUID(), "name": name})
	r.apiError(t, http.StatusConflict, "placement.duplicate_name")
	if d := r.detail(t); !strings.Contains(d, "Conflicting resource provider name: "+name+" already exists.") {
		t.Errorf("duplicate name detail: %q", d)
	}
}

func contractErrors(t *testing.T, c *client) {
	missing := "/resource_providers/" + newUUID()
	r := c.do(t, "GET", missing, nil)
	r.apiError(t, http.StatusNotFound, "placement.undefined_code")
	if d := r.detail(t); !strings.Contains(d, "No resource provider with uuid") {
		t.Errorf("404 detail: %q", d)
	}
	// The code field only exists from 1.23.
	c.do(t, "GET", missing, nil, version("1.22")).apiError(t, http.StatusNotFound, "")
	_, _, gen := c.provider(t) // a real generation: the suite never invents one
	c.do(t, "PUT", missing+"/inventories", inventories(gen, "", 0, 0)).
		apiError(t, http.StatusNotFound, "placement.undefined_code")

	// Success answers carry the request id too.
	r = c.do(t, "GET", "/resource_providers?name=contract-missing-"+uniq(8), nil).expect(t, http.StatusOK)
	if id := r.header.Get("X-Openstack-Request-Id"); !requestID.MatchString(id) {
		t.Errorf("x-openstack-request-id on 200: %q", id)
	}

	// A body must be declared as JSON.
	r = c.do(t, "POST", "/resource_providers", `{"name": "x"}`, header{"Content-Type", "text/plain"})
	r.apiError(t, http.StatusUnsupportedMediaType, "placement.undefined_code")
}
