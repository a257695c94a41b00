package fakeironic

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// The fake must serve the bytes the real Ironic 21.4 served for the same
// nodes: testdata/real_page_1.82.json was captured from it (two nodes, one
// powered on with traits, one active with an instance; limit=2).
func TestPageIsByteIdenticalToRealIronic(t *testing.T) {
	real, err := os.ReadFile("testdata/real_page_1.82.json")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []Node{
		{UUID: "7c52837e-a6f8-449a-8c5f-8d50fc11b365", Name: "bm-1", ResourceClass: "baremetal-gold",
			ProvisionState: "available", PowerState: "power on", Shard: "shard-a",
			Traits: []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}},
		{UUID: "b8ddfa17-e3db-409a-a81e-4ff2544d22dd", Name: "bm-2", ResourceClass: "baremetal-gold",
			ProvisionState: "active", InstanceUUID: "11111111-2222-4333-8444-555555555555", Shard: "shard-a"},
		{UUID: "599df7d3-af12-4520-b111-f293a75eedc4", Name: "bm-3"},
	}
	s := New(nodes, 82)
	req := httptest.NewRequest("GET", "/v1/nodes?fields=uuid,name,resource_class,provision_state,target_provision_state,"+
		"power_state,maintenance,instance_uuid,conductor_group,traits,fault,retired,shard&limit=2&sort_key=id&sort_dir=asc", nil)
	req.Host = "127.0.0.1:16385"
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	got := rec.Body.String()
	if rec.Code != http.StatusOK || got != strings.TrimSpace(string(real)) {
		t.Fatalf("status %d\ngot  %s\nwant %s", rec.Code, got, real)
	}
}
