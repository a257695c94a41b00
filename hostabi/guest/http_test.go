package guest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

var testProjection = Projection{Array: "items", Fields: []Field{{Name: "id", Kind: KindString}}}

// A projected request reaches the host with its projection, and a 2xx
// answer comes back as records; another status, as its body.
func TestHTTPProjectsA2xxAnswer(t *testing.T) {
	var status int
	var asked *Projection
	SetHTTPForTest(func(r HTTPRequest) (HTTPResponse, error) {
		asked = r.Project
		return HTTPResponse{Status: status, Body: []byte(`{"items": [{"id": "a"}, {"id": "b"}]}`)}, nil
	})
	defer SetHTTPForTest(nil)
	status = 200
	resp, err := HTTP(HTTPRequest{Service: "s", Path: "/items", Project: &testProjection})
	if err != nil || asked == nil || asked.Array != "items" || resp.Projected == nil || resp.Body != nil {
		t.Fatalf("resp %+v, %v (asked %+v)", resp, err, asked)
	}
	if r, err := resp.Records(testProjection); err != nil || r.Len() != 2 || r.String(1, 0) != "b" {
		t.Fatalf("records %d, %v", r.Len(), err)
	}
	status = 404
	resp, err = HTTP(HTTPRequest{Service: "s", Path: "/items", Project: &testProjection})
	if err != nil || resp.Projected != nil || !strings.Contains(string(resp.Body), `"id": "a"`) {
		t.Fatalf("404: %+v, %v", resp, err)
	}
}

// A malformed 2xx body is the projection's error, and a bad projection
// never leaves the plugin.
func TestHTTPProjectionErrors(t *testing.T) {
	calls := 0
	SetHTTPForTest(func(HTTPRequest) (HTTPResponse, error) {
		calls++
		return HTTPResponse{Status: 200, Body: []byte(`{"items": [`)}, nil
	})
	defer SetHTTPForTest(nil)
	resp, err := HTTP(HTTPRequest{Service: "s", Path: "/", Project: &testProjection})
	if err != nil || resp.ProjectErr == nil || !strings.Contains(resp.ProjectErr.Error(), "not valid JSON") {
		t.Fatalf("resp %+v, %v", resp, err)
	}
	if _, err := resp.Records(testProjection); err != resp.ProjectErr {
		t.Fatalf("Records: %v", err)
	}
	bad := Projection{Array: "items", Fields: []Field{{Name: "id"}}}
	if _, err := HTTP(HTTPRequest{Service: "s", Path: "/", Project: &bad}); err == nil || calls != 1 {
		t.Fatalf("a field without a kind: %v, %d calls", err, calls)
	}
}

// From a host that sends the body (one older than projected responses),
// Records projects it in the plugin: the same records either way.
func TestRecordsFallsBackToTheBody(t *testing.T) {
	resp := HTTPResponse{Status: 200, Body: []byte(`{"items": [{"id": "x"}]}`)}
	r, err := resp.Records(testProjection)
	if err != nil || r.Len() != 1 || r.String(0, 0) != "x" {
		t.Fatalf("records %d, %v", r.Len(), err)
	}
}

// The request head the SDK encodes (projections from its cache) is the
// JSON of hostabi.HTTPRequestHead, whatever projections come in turn.
func TestRequestHeadIsHTTPRequestHead(t *testing.T) {
	small := Projection{Array: "nodes", Fields: []Field{{Name: "uuid", Kind: KindString}}, Top: []Field{{Name: "next", Kind: KindString}}}
	full := Projection{Array: "nodes", Fields: append(slices.Clone(small.Fields), Field{Name: "traits", Kind: KindStrings}), Top: small.Top}
	for _, req := range []HTTPRequest{
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Header: map[string]string{"A": "b"}},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Project: &small, Keep: &full},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Project: &full},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Project: &small, Keep: &full},
		{Service: "baremetal", Method: "GET", Path: "/v1/nodes", Project: &small},
	} {
		frame, err := encodeHTTPRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := hostabi.SplitFrame(frame)
		want := hostabi.HTTPRequestHead{Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header}
		for _, p := range []struct {
			from *Projection
			to   **hostabi.ProjectSpec
		}{{req.Project, &want.Project}, {req.Keep, &want.Keep}} {
			if p.from != nil {
				s, _ := projection.ToSpec(*p.from)
				*p.to = &s
			}
		}
		if raw, _ := json.Marshal(want); string(raw) != string(head) {
			t.Errorf("head %s, want %s", head, raw)
		}
	}
}
