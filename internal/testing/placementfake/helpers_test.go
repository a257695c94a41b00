package placementfake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// do sends one request the way the engine does and decodes a JSON answer
// (numbers as json.Number). It fails the test on a transport error.
func do(t *testing.T, s *placementfake.Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	status, m, err := try(s, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, m
}

// try is do without failing, for requests that are expected to break.
func try(s *placementfake.Server, method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&m)
	return resp.StatusCode, m, nil
}

// create makes a provider over HTTP and returns its generation.
func create(t *testing.T, s *placementfake.Server, uuid string) json.Number {
	t.Helper()
	status, m := do(t, s, "POST", "/resource_providers", map[string]any{"uuid": uuid, "name": "rp-" + uuid})
	if status != http.StatusOK {
		t.Fatalf("create %s: %d %v", uuid, status, m)
	}
	return m["generation"].(json.Number)
}

func gen(t *testing.T, s *placementfake.Server, uuid string) json.Number {
	t.Helper()
	status, m := do(t, s, "GET", "/resource_providers/"+uuid, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", uuid, status, m)
	}
	return m["generation"].(json.Number)
}

// code returns the error code of an error body.
func code(m map[string]any) string {
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	c, _ := errs[0].(map[string]any)["code"].(string)
	return c
}

// putInventory writes one VCPU inventory with the given generation.
func putInventory(t *testing.T, s *placementfake.Server, uuid string, g json.Number) (int, map[string]any) {
	t.Helper()
	return do(t, s, "PUT", "/resource_providers/"+uuid+"/inventories", map[string]any{
		"resource_provider_generation": g,
		"inventories":                  map[string]any{"VCPU": map[string]any{"total": 8}},
	})
}

func uuidN(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
