package placement

import (
	"errors"
	"net/http"
	"testing"
)

func TestAPIErrorCodes(t *testing.T) {
	h := http.Header{"X-Openstack-Request-Id": {"req-1"}}
	body := []byte(`{"errors": [{"status": 409, "title": "Conflict", "detail": "generation conflict", "code": "placement.concurrent_update", "request_id": "req-1"}]}`)
	e := decodeAPIError("PUT", "/x", 409, h, body)
	if !errors.Is(e, ErrConcurrentUpdate) || errors.Is(e, ErrInventoryInUse) || e.RequestID != "req-1" {
		t.Fatalf("%+v", e)
	}
	if e := decodeAPIError("GET", "/x", 404, nil, []byte("<html>")); !errors.Is(e, ErrNotFound) || e.Code != "" {
		t.Fatalf("%+v", e)
	}
}

func FuzzDecodeAPIError(f *testing.F) {
	f.Add(409, []byte(`{"errors": [{"code": "placement.concurrent_update"}]}`))
	f.Add(400, []byte(`{"errors": []}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := decodeAPIError("GET", "/", status, nil, body)
		_ = e.Error()
		if len(e.Detail) > 520 && e.Code == "" {
			t.Fatalf("undecodable body not truncated: %d bytes", len(e.Detail))
		}
	})
}

func FuzzGeneration(f *testing.F) {
	f.Add([]byte("0"))
	f.Add([]byte("null"))
	f.Add([]byte("18446744073709551616"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var g Generation
		if g.UnmarshalJSON(b) != nil {
			return
		}
		out, err := g.MarshalJSON()
		if err != nil || string(out) != string(g) {
			t.Fatalf("generation %q did not round-trip: %q %v", b, out, err)
		}
	})
}

func TestWriteAnswerWithoutGenerationIsAnError(t *testing.T) {
	if _, err := written("", nil); err == nil {
		t.Fatal("a write answer without a generation was accepted")
	}
	if g, err := written("7", nil); err != nil || g != "7" {
		t.Fatal(g, err)
	}
}
