package wasmhost

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

var testSpec = hostabi.ProjectSpec{
	Array: "nodes",
	Fields: []hostabi.ProjectField{
		{Name: "uuid", Kind: hostabi.ProjectString}, {Name: "maintenance", Kind: hostabi.ProjectBool},
		{Name: "traits", Kind: hostabi.ProjectStrings}, {Name: "properties", Kind: hostabi.ProjectRaw},
	},
	Top: []hostabi.ProjectField{{Name: "next", Kind: hostabi.ProjectString}},
}

const testPage = `{"nodes": [{"uuid": "a", "maintenance": true, "traits": ["CUSTOM_X"], "properties": {"cpus": 8}, "links": [1]},
	{"uuid": "b\u00e9", "name": "skipped"}], "next": "http://ironic/v1/nodes?marker=b"}`

// projectServer answers body with status on every path, counting requests.
func projectServer(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// projectVia sends one GET with spec through g and returns the head and
// body of the answer.
func projectVia(t *testing.T, g *gate, service string, spec *hostabi.ProjectSpec) (hostabi.HTTPResponseHead, []byte) {
	t.Helper()
	raw, _ := json.Marshal(hostabi.HTTPRequestHead{Service: service, Method: "GET", Path: "/v1/nodes", Project: spec})
	frame := g.do(context.Background(), hostabi.AppendFrame(nil, raw, nil))
	rawHead, body, err := hostabi.SplitFrame(frame)
	var h hostabi.HTTPResponseHead
	if err != nil || json.Unmarshal(rawHead, &h) != nil {
		t.Fatalf("bad response frame %q", frame)
	}
	if h.Projected && (4+len(rawHead))%8 != 0 {
		t.Errorf("a projected body starts at byte %d of the frame, not 8-aligned", 4+len(rawHead))
	}
	return h, body
}

// A 2xx body comes back as the records the guest's own projection would
// make of it, and nothing else of the body.
func TestGateProjectsA2xxBody(t *testing.T) {
	srv, _ := projectServer(t, 200, testPage)
	g := testGate(t, map[string]string{"baremetal": srv.URL})
	h, body := projectVia(t, g, "baremetal", &testSpec)
	if h.Status != 200 || !h.Projected || h.Error != "" {
		t.Fatalf("head %+v", h)
	}
	got, err := projection.ParseWire(append([]byte(nil), body...))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := projection.FromSpec(testSpec)
	want, _ := projection.ProjectLocal([]byte(testPage), p)
	if got.Len() != 2 || got.String(1, 0) != "bé" || got.TopString(0) != want.TopString(0) ||
		!reflect.DeepEqual(got.Strings(0, 2), want.Strings(0, 2)) || got.String(0, 3) != `{"cpus": 8}` || !got.Bool(0, 1) {
		t.Fatalf("projected %d records: %q %q %v", got.Len(), got.String(1, 0), got.TopString(0), got.Strings(0, 2))
	}
	if strings.Contains(string(body), "skipped") || strings.Contains(string(body), "links") {
		t.Fatalf("members not asked for crossed: %q", body)
	}
}

// Another status is the service's answer, raw: the plugin reads its error.
func TestGateSendsAnErrorStatusAsIs(t *testing.T) {
	const fault = `{"error_message": "{\"faultstring\": \"Node x could not be found.\"}"}`
	srv, _ := projectServer(t, 404, fault)
	h, body := projectVia(t, testGate(t, map[string]string{"baremetal": srv.URL}), "baremetal", &testSpec)
	if h.Status != 404 || h.Projected || string(body) != fault {
		t.Fatalf("head %+v body %q", h, body)
	}
}

// A page that is not JSON, or not of the projection's shape, reaches the
// plugin as the projection's error (the plugin reports a malformed body,
// as when it projected the body itself), never as records.
func TestGateAnswersAMalformedPageWithTheProjectionsError(t *testing.T) {
	for body, want := range map[string]string{
		`{"nodes": [{"uuid": "a"}`:     "json projection: document is not valid JSON: unexpected end at offset 24",
		`{"nodes": {"uuid": "a"}}`:     `json projection: member "nodes" is a JSON object, want an array`,
		`{"nodes": [{"uuid": 7}]}`:     "json projection: nodes[0].uuid is a JSON number, want a string or null",
		`{"nodes": [], "next": false}`: "json projection: next is a JSON bool, want a string or null",
		`{"servers": []}`:              `json projection: document has no member "nodes"`,
	} {
		srv, _ := projectServer(t, 200, body)
		h, frame := projectVia(t, testGate(t, map[string]string{"baremetal": srv.URL}), "baremetal", &testSpec)
		if !h.Projected {
			t.Errorf("%s: head %+v", body, h)
			continue
		}
		if _, err := projection.ParseWire(append([]byte(nil), frame...)); err == nil || err.Error() != want {
			t.Errorf("%s: err %v, want %q", body, err, want)
		}
	}
}

// Asking for a projection changes nothing of what the gate refuses, and
// a spec the host cannot run is refused before any request is sent.
func TestGateProjectionRefusals(t *testing.T) {
	srv, requests := projectServer(t, 200, testPage)
	g := testGate(t, map[string]string{"baremetal": srv.URL})
	many := hostabi.ProjectSpec{Array: "nodes"}
	for i := range hostabi.MaxProjectFields + 1 {
		many.Fields = append(many.Fields, hostabi.ProjectField{Name: strings.Repeat("f", i), Kind: hostabi.ProjectString})
	}
	for _, c := range []struct {
		name, service string
		spec          hostabi.ProjectSpec
		want          string
	}{
		{"ungranted", "identity", testSpec, `service "identity" is not granted`},
		{"bad kind", "baremetal", hostabi.ProjectSpec{Array: "nodes", Fields: []hostabi.ProjectField{{Name: "uuid", Kind: "int"}}},
			`malformed request head: projection: fields[0] "uuid": kind "int" is not string, bool, strings or raw`},
		{"twice", "baremetal", hostabi.ProjectSpec{Array: "nodes", Top: []hostabi.ProjectField{{Name: "n", Kind: "raw"}, {Name: "n", Kind: "raw"}}},
			`projection: top[1]: "n" is named twice`},
		{"too many", "baremetal", many, "projection: 257 fields, more than 256"},
	} {
		h, body := projectVia(t, g, c.service, &c.spec)
		if h.Status != 0 || !strings.Contains(h.Error, c.want) || len(body) != 0 {
			t.Errorf("%s: head %+v body %d bytes, want error %q", c.name, h, len(body), c.want)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent for refused projections", n)
	}
}

// The body cap holds for a projected response, and the frame is capped
// too: a page of empty objects within the body cap would project to far
// more bytes than it has (8 per field asked, per record).
func TestGateProjectionIsCapped(t *testing.T) {
	page := `{"nodes": [` + strings.TrimSuffix(strings.Repeat("{},", 20_000), ",") + `]}` // 60 kB
	srv, _ := projectServer(t, 200, page)
	for _, c := range []struct {
		cap  int64
		want string
	}{
		{50_000, "response body exceeds the 50000-byte cap (max_http_response)"},
		{100_000, "projected response body exceeds the 100000-byte cap (max_http_response)"},
	} {
		g, err := newGate(Options{Services: map[string]string{"baremetal": srv.URL}, MaxHTTPResponse: c.cap}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := projectVia(t, g, "baremetal", &testSpec); h.Status != 0 || h.Error != c.want {
			t.Errorf("cap %d: head %+v, want %q", c.cap, h, c.want)
		}
	}
	g, _ := newGate(Options{Services: map[string]string{"baremetal": srv.URL}, MaxHTTPResponse: 2 << 20}.withDefaults())
	if h, _ := projectVia(t, g, "baremetal", &testSpec); !h.Projected || h.Error != "" {
		t.Errorf("under both caps: head %+v", h)
	}
}

// With RawBodies the gate is a host that predates projected responses:
// it ignores the projection, even one it could not run.
func TestGateRawBodiesIgnoresTheProjection(t *testing.T) {
	srv, _ := projectServer(t, 200, testPage)
	g, _ := newGate(Options{Services: map[string]string{"baremetal": srv.URL}, RawBodies: true}.withDefaults())
	bad := hostabi.ProjectSpec{Fields: []hostabi.ProjectField{{Name: "x", Kind: "int"}}}
	for _, spec := range []*hostabi.ProjectSpec{&testSpec, &bad} {
		if h, body := projectVia(t, g, "baremetal", spec); h.Projected || h.Status != 200 || string(body) != testPage {
			t.Errorf("head %+v body %q", h, body)
		}
	}
}
