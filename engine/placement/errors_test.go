package placement

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
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

func TestErrorsNameTitleDetailAndRequestID(t *testing.T) {
	h := http.Header{"X-Openstack-Request-Id": {"req-7"}}
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		want []string
	}{
		// The answer that was logged as "502 :  (request )".
		{"json title only", nil, `{"errors": [{"status": 502, "title": "Bad Gateway", "request_id": "req-9"}]}`,
			[]string{"502 Bad Gateway", "[request req-9]"}},
		{"webob detail", h, `{"errors": [{"title": "Conflict", "detail": "There was a conflict.\n\n resource provider generation conflict  ", "code": "placement.concurrent_update"}]}`,
			[]string{"409 Conflict (placement.concurrent_update): There was a conflict. resource provider generation conflict [request req-7]"}},
		{"proxy html", nil, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
			[]string{"502 Bad Gateway: 502 Bad Gateway [no request id]"}},
		{"plain text", h, "upstream connect error or disconnect/reset before headers\r\n",
			[]string{"upstream connect error or disconnect/reset before headers [request req-7]"}},
		{"empty", nil, "", []string{"GET /x: 502 Bad Gateway [no request id]"}},
	} {
		status := 502
		if strings.Contains(tc.body, "conflict") {
			status = 409
		}
		got := decodeAPIError("GET", "/x", status, tc.h, []byte(tc.body)).Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
	}
}

func TestHugeErrorAnswersCostBoundedMemory(t *testing.T) {
	page := strings.Repeat("<p>proxy error</p>\n", 1<<20) // 19 MiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
			return
		}
		w.WriteHeader(502)
		io.WriteString(w, page)
	}))
	defer srv.Close()
	c, err := New(t.Context(), Config{Endpoint: srv.URL, Token: "admin", Retry: Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.GetProvider(t.Context(), "u")
	var api *APIError
	if !errors.As(err, &api) || api.Status != 502 || len(api.Detail) > maxDetail+3 {
		t.Fatalf("%v", err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if d := ms.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("reading a 19 MiB error page allocated %d MiB", d>>20)
	}
}
