package fakeironic

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// Pages renders the full listing of nodes, limit per page, as the real
// Ironic would serve it to the plugin at 1.82 (for decoder benchmarks).
func Pages(tb testing.TB, nodes []Node, limit int) [][]byte {
	tb.Helper()
	s := New(nodes, 82)
	var out [][]byte
	marker := ""
	for {
		uri := "/v1/nodes?fields=uuid,name,resource_class,provision_state,target_provision_state,power_state," +
			"maintenance,instance_uuid,conductor_group,traits,fault,retired,shard&limit=" + itoa(limit) + "&sort_key=id&sort_dir=asc"
		if marker != "" {
			uri += "&marker=" + marker
		}
		req := httptest.NewRequest("GET", uri, nil)
		req.Host = "ironic.example.com:6385"
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			tb.Fatalf("%s: %d %s", uri, rec.Code, rec.Body)
		}
		out = append(out, rec.Body.Bytes())
		var p struct {
			Nodes []struct{ UUID string }
			Next  string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		if p.Next == "" {
			return out
		}
		marker = p.Nodes[len(p.Nodes)-1].UUID
	}
}
