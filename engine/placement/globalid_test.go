package placement

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
)

// Every request made with a cycle's context sends its global request id,
// in the form oslo.middleware accepts; others send none.
func TestGlobalRequestIDIsSent(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-OpenStack-Request-ID"))
		mu.Unlock()
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
			return
		}
		w.Write([]byte(`{"uuid":"u","name":"u","generation":1}`))
	}))
	defer srv.Close()
	c, err := New(context.Background(), Config{Endpoint: srv.URL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	id := NewGlobalRequestID()
	if !regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("id %q is not req-<uuid>", id)
	}
	ctx := WithGlobalRequestID(context.Background(), id)
	for range 2 {
		if _, err := c.GetProvider(ctx, "u"); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "" || got[1] != id || got[2] != id {
		t.Fatalf("headers sent: %q", got)
	}
}
