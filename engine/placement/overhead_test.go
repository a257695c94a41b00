package placement

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRequestOverhead compares one PUT through this client with the
// same PUT through a bare net/http client, against a server that answers
// at once: the difference is the client's own cost per request.
func BenchmarkRequestOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
			return
		}
		w.Write([]byte(`{"resource_provider_generation": 5, "traits": ["A"]}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Endpoint: srv.URL, Token: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("client", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.SetTraits(ctx, "u", "4", []string{"A"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		hc := &http.Client{}
		for b.Loop() {
			req, _ := http.NewRequest("PUT", srv.URL+"/resource_providers/u/traits",
				bytes.NewReader([]byte(`{"resource_provider_generation":4,"traits":["A"]}`)))
			req.Header.Set("X-Auth-Token", "admin")
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
		}
	})
}
