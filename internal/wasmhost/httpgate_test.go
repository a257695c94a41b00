package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func testGate(t *testing.T, services map[string]string) *gate {
	t.Helper()
	g, err := newGate(Options{Services: services}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGateResolve(t *testing.T) {
	g := testGate(t, map[string]string{
		"baremetal": "http://ironic:6385",
		"compute":   "https://cloud.example/compute/v2.1/",
		"tokened":   "http://world:8080/w?token=SvcTok12345",
	})
	cases := []struct{ service, path, want, err string }{
		{"baremetal", "/v1/nodes?limit=1000", "http://ironic:6385/v1/nodes?limit=1000", ""},
		{"baremetal", "/", "http://ironic:6385/", ""},
		{"compute", "/servers/detail?all_tenants=1", "https://cloud.example/compute/v2.1/servers/detail?all_tenants=1", ""},
		{"compute", "/servers/../flavors", "https://cloud.example/compute/v2.1/servers/../flavors", ""},
		{"compute", "/../../baremetal", "", "leaves the compute endpoint"},
		{"compute", "/..", "", "leaves the compute endpoint"},
		{"baremetal", "//evil.example/x", "http://ironic:6385//evil.example/x", ""},
		{"baremetal", "@evil.example/x", "", "must start with /"},
		{"baremetal", "", "", "must start with /"},
		{"tokened", "/nodes", "http://world:8080/w/nodes?token=SvcTok12345", ""},
		{"tokened", "/nodes?limit=5", "http://world:8080/w/nodes?token=SvcTok12345&limit=5", ""},
		{"tokened", "/../x", "", "leaves the tokened endpoint"},
		{"identity", "/v3", "", `service "identity" is not granted (granted in [plugin.services]: baremetal, compute, tokened)`},
		{"", "/v3", "", `service "" is not granted`},
	}
	for _, c := range cases {
		got, err := g.resolve(c.service, c.path)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %s: err = %v, want %q", c.service, c.path, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s %s: got %q, %v; want %q", c.service, c.path, got, err, c.want)
		}
	}
}

func TestGateRefusesBadEndpoints(t *testing.T) {
	for _, e := range []string{"ironic:6385", "ftp://x", "http://", "::"} {
		if _, err := newGate(Options{Services: map[string]string{"s": e}}.withDefaults()); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
}

// Whatever frame a guest hands the gate, the gate answers with a frame,
// never panics, and never sends a request anywhere but a granted service.
func FuzzGateRequest(f *testing.F) {
	var elsewhere atomic.Int64
	granted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/svc") {
			elsewhere.Add(1)
		}
	}))
	defer granted.Close()
	g, _ := newGate(Options{Services: map[string]string{"svc": granted.URL + "/svc"}}.withDefaults())
	head := func(h hostabi.HTTPRequestHead) []byte { b, _ := json.Marshal(h); return b }
	f.Add(hostabi.AppendFrame(nil, head(hostabi.HTTPRequestHead{Service: "svc", Method: "GET", Path: "/x"}), nil))
	f.Add(hostabi.AppendFrame(nil, head(hostabi.HTTPRequestHead{Service: "svc", Method: "POST", Path: "/../x"}), []byte("b")))
	f.Add(hostabi.AppendFrame(nil, []byte(`{"service":"svc","method":"GET","path":"/%2e%2e/x"}`), nil))
	f.Add(hostabi.AppendFrame(nil, head(hostabi.HTTPRequestHead{Service: "svc", Method: "GET", Path: "/x", Project: &testSpec}), nil))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		resp := g.do(context.Background(), frame)
		rawHead, _, err := hostabi.SplitFrame(resp)
		var h hostabi.HTTPResponseHead
		if err != nil || json.Unmarshal(rawHead, &h) != nil {
			t.Fatalf("bad response frame %q", resp)
		}
		if (h.Error == "") == (h.Status == 0) {
			t.Fatalf("response head %+v: exactly one of status and error must be set", h)
		}
		if n := elsewhere.Load(); n > 0 {
			t.Fatalf("a request left the granted prefix for frame %q", frame)
		}
	})
}

// readBody returns the whole body after headRoom free bytes, whether its
// length was announced, unknown or wrong, and reads at most what its
// reader gives (the gate's LimitReader is the cap).
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 20_000) // 200 kB: several chunks
	for _, c := range []struct {
		name string
		size int64
	}{{"announced", int64(len(body))}, {"unknown", -1}, {"announced short", 10}, {"over the limit", 1 << 40}} {
		got, err := readBody(bytes.NewReader(body), c.size, 1<<30)
		if err != nil || len(got) < headRoom || !bytes.Equal(got[headRoom:], body) {
			t.Errorf("%s: %d bytes, %v", c.name, len(got), err)
		}
	}
	got, err := readBody(io.LimitReader(bytes.NewReader(body), 101), -1, 100)
	if err != nil || len(got)-headRoom != 101 {
		t.Errorf("capped: %d bytes, %v", len(got)-headRoom, err)
	}
}
