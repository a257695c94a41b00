package guest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// FuzzResponseHead: whatever fastResponseHead accepts, encoding/json
// decodes to the same head; and it accepts every head the host writes
// whose strings need no escape.
func FuzzResponseHead(f *testing.F) {
	heads := []hostabi.HTTPResponseHead{
		{Status: 200, Header: map[string]string{"Content-Type": "application/json", "X-Openstack-Ironic-Api-Version": "1.82"}, Projected: true, Ref: 3},
		{Status: 404, Header: map[string]string{"Content-Length": "12"}},
		{Error: "service \"x\" is not granted"},
		{Status: 200, Header: map[string]string{"A": "é ü"}, Projected: true},
		{Status: 503, Header: map[string]string{}},
		{Status: 200, Ref: 4294967295, Projected: true},
	}
	for _, h := range heads {
		raw, _ := json.Marshal(h)
		f.Add(raw)
		f.Add(append(raw, "   "...))
	}
	for _, s := range []string{`{"status":01}`, `{"status":1e2}`, `{"status":200,"ref":-1}`, `{"status":200,"header":{"a":"b",}}`, `{"status":200} x`, "{\"status\":200,\"error\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := fastResponseHead(b)
		if !ok {
			return
		}
		var slow hostabi.HTTPResponseHead
		if err := json.Unmarshal(b, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v (%v)", b, fast, slow, err)
		}
	})
}

func TestFastResponseHeadTakesWhatTheHostWrites(t *testing.T) {
	for _, h := range []hostabi.HTTPResponseHead{
		{Status: 200, Header: map[string]string{"Content-Type": "application/json", "Date": "Wed, 02 Dec 2026 01:00:00 GMT"}, Projected: true, Ref: 12},
		{Status: 0, Error: "the call's deadline passed"},
		{Status: 301, Header: map[string]string{"Location": "/v1/x"}},
	} {
		raw, _ := json.Marshal(h)
		got, ok := fastResponseHead(append(raw, "  "...))
		if !ok || !reflect.DeepEqual(got, h) {
			t.Errorf("%s: %+v, %v", raw, got, ok)
		}
	}
	if _, ok := fastResponseHead([]byte(`{"status":200,"header":{"A":"\u003c"}}`)); ok {
		t.Error("an escape was taken")
	}
}

// FuzzRequestHead: whatever request head appendFast writes is, byte for
// byte, what json.Marshal writes for it; and it writes every head whose
// strings are printable ASCII without quotes or backslashes.
func FuzzRequestHead(f *testing.F) {
	f.Add("baremetal", "GET", "/v1/nodes?fields=uuid%2Cname&limit=1000&marker=x<y>", "Accept", "application/json", `{"array":"nodes"}`, true)
	f.Add("compute", "POST", "/servers", "", "", "", false)
	f.Add("b", "GET", "/é", "X-A", "\"q\"", "", false)
	f.Add("b", "GET", "/a\\b\x01\x7f", "K", "v\u2028", `{"a":"<&>"}`, true)
	f.Fuzz(func(t *testing.T, service, method, path, key, value, spec string, keep bool) {
		h := requestHead{Service: service, Method: method, Path: path}
		if key != "" {
			h.Header = map[string]string{key: value, "Accept": "application/json"}
		}
		if json.Valid([]byte(spec)) {
			raw, _ := json.Marshal(json.RawMessage(spec)) // compact, as specCache's are
			h.Project = raw
			if keep {
				h.Keep = raw
			}
		}
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := h.appendFast(nil)
		all := service + method + path
		if key != "" {
			all += key + value
		}
		if plain := printable(all); ok != plain {
			t.Fatalf("%+v: appendFast ok %v, printable %v", h, ok, plain)
		}
		if ok && string(got) != string(want) {
			t.Fatalf("appendFast %s\njson.Marshal %s", got, want)
		}
	})
}

// printable: every byte is ASCII 0x20–0x7e and none is a quote or a backslash.
func printable(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// A request the Ironic plugin sends every page goes the fast way, and
// one it cannot write as is still reaches the host as encoding/json
// writes it.
func TestFastRequestHead(t *testing.T) {
	spec, _ := json.Marshal(map[string]string{"array": "nodes"})
	for _, h := range []requestHead{
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes?limit=1000&marker=0d6f3c52-8f5a-4b0e-9b1a-000000000001&sort_dir=asc",
			Header: map[string]string{"X-OpenStack-Ironic-API-Version": "1.82", "Accept": "application/json"}, Project: spec, Keep: spec},
		{Service: "compute", Method: "GET", Path: "/servers/detail?host=h&node=n", Header: map[string]string{}},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes/ünïcode"},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Header: map[string]string{"A": "say \"hi\"\n"}},
	} {
		want, _ := json.Marshal(h)
		got, ok := h.appendFast(nil)
		if ok != printable(h.Path+h.Header["A"]) {
			t.Errorf("%s: fast %v", want, ok)
		}
		if ok && string(got) != string(want) {
			t.Errorf("fast %s, want %s", got, want)
		}
		frame, err := encodeHTTPRequest(HTTPRequest{Service: h.Service, Method: h.Method, Path: h.Path, Header: h.Header})
		if head, _, _ := hostabi.SplitFrame(frame); err != nil || !json.Valid(head) {
			t.Errorf("%s: frame head %s, %v", want, head, err)
		}
	}
}
