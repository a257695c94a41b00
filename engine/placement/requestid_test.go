package placement

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A write's answer id is kept for its log record, bounded in size; an
// error names Placement's id and the cycle's global id.
func TestAnswerIDAndErrorsNameBothIDs(t *testing.T) {
	answerID := "req-aaaaaaaa-0000-4000-8000-000000000001"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
		case strings.HasSuffix(r.URL.Path, "/huge"):
			w.Header().Set("X-Openstack-Request-Id", strings.Repeat("x", 10000))
			w.Write([]byte(`{"uuid":"huge","name":"huge","generation":1}`))
		case r.Method == "PUT":
			w.Header().Set("X-Openstack-Request-Id", answerID)
			w.WriteHeader(409)
			w.Write([]byte(`{"errors":[{"status":409,"code":"placement.concurrent_update","title":"Conflict","detail":"generation"}]}`))
		default:
			w.Header().Set("Openstack-Request-Id", answerID)
			w.Write([]byte(`{"uuid":"u","name":"u","generation":1}`))
		}
	}))
	defer srv.Close()
	c, err := New(context.Background(), Config{Endpoint: srv.URL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	global := NewGlobalRequestID()
	ctx, answer := WithAnswerID(WithGlobalRequestID(context.Background(), global))
	if answer.Last() != "" {
		t.Fatalf("an id before any answer: %q", answer.Last())
	}
	if _, err := c.GetProvider(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if answer.Last() != answerID {
		t.Fatalf("answer id %q, want %q", answer.Last(), answerID)
	}
	if _, err := c.GetProvider(ctx, "huge"); err != nil {
		t.Fatal(err)
	}
	if n := len(answer.Last()); n > maxRequestID+3 {
		t.Fatalf("a 10,000-byte header kept as %d bytes", n)
	}
	_, err = c.SetTraits(ctx, "u", "1", nil)
	var api *APIError
	if !errors.As(err, &api) || api.RequestID != answerID || api.GlobalRequestID != global {
		t.Fatalf("error %#v", err)
	}
	if want := "[request " + answerID + ", global " + global + "]"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %q", err, want)
	}
}

// Placement's own ids are kept without a copy; anything else is cut to
// one printable word.
func TestRequestIDBounded(t *testing.T) {
	for in, want := range map[string]string{
		"req-aaaaaaaa-0000-4000-8000-000000000001": "req-aaaaaaaa-0000-4000-8000-000000000001",
		"req-1\n\t<html>":                          "req-1 <html>",
		"req-\x00x":                                "req-x",
		strings.Repeat("x", 100):                   strings.Repeat("x", maxRequestID) + "...",
	} {
		h := http.Header{}
		h.Set("Openstack-Request-Id", in)
		if got := requestID(h); got != want {
			t.Errorf("requestID(%q) = %q, want %q", in, got, want)
		}
	}
	h := http.Header{}
	h.Set("X-Openstack-Request-Id", "req-aaaaaaaa-0000-4000-8000-000000000001")
	if n := testing.AllocsPerRun(100, func() { requestID(h) }); n != 0 {
		t.Errorf("%v allocations reading Placement's id", n)
	}
}
