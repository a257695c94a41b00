package ops_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/ops"
)

func TestBuildAndPluginInfo(t *testing.T) {
	m := ops.NewMetrics()
	m.SetBuildInfo("v1.2.3", "abc123", "go1.26.0", "v1.12.0", "1")
	m.SetPlugin("ironic", "", "1")
	m.SetPlugin("ironic", "2.0.1", "1") // a reload: one series, the new one
	h := m.Handler()
	if v := metric(t, h, `rpengine_build_info{abi="1",commit="abc123",goversion="go1.26.0",version="v1.2.3",wazero="v1.12.0"}`); v != 1 {
		t.Errorf("build info %v", v)
	}
	if v := metric(t, h, `rpengine_plugin_info{abi="1",name="ironic",version="2.0.1"}`); v != 1 {
		t.Errorf("plugin info %v", v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if strings.Contains(rec.Body.String(), `version="unknown"`) {
		t.Error("the replaced plugin's series is still exported")
	}
}

// The plugin's requests are timed by service and outcome.
func TestPluginHTTPMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/baremetal/v1/nodes/missing"):
			w.WriteHeader(404)
		case strings.HasPrefix(r.URL.Path, "/compute"):
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	m := ops.NewMetrics()
	services := map[string]string{"baremetal": srv.URL + "/baremetal/v1/", "compute": srv.URL + "/compute", "root": srv.URL}
	c := &http.Client{Transport: m.PluginHTTP(services, nil)}
	for _, p := range []string{"/baremetal/v1/nodes", "/baremetal/v1/nodes", "/baremetal/v1/nodes/missing", "/compute/servers", "/other"} {
		resp, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := c.Get("http://127.0.0.1:1/refused") // nothing listens on port 1
	if err == nil {
		resp.Body.Close()
	}
	got := map[string]uint64{}
	for _, k := range [][2]string{{"baremetal", "ok"}, {"baremetal", "not_found"}, {"compute", "server_error"},
		{"root", "ok"}, {"other", "transport_error"}} {
		got[k[0]+" "+k[1]] = m.PluginHTTPRequests(k[0], k[1])
	}
	want := map[string]uint64{"baremetal ok": 2, "baremetal not_found": 1, "compute server_error": 1, "root ok": 1, "other transport_error": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d requests, want %d", k, got[k], v)
		}
	}
}
