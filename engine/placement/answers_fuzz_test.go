package placement_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// answerServer answers version discovery properly and every other
// request with the fuzzer's status and body.
type answerServer struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (s *answerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39","min_version":"1.0"}]}`))
		return
	}
	s.mu.Lock()
	status, body := s.status, s.body
	s.mu.Unlock()
	w.WriteHeader(status)
	w.Write(body)
}

// FuzzAnswers feeds the client's decoders whatever a broken Placement or
// a proxy in front of it could answer: every call must return a value or
// an error, never panic, and a generation it returns must be sendable
// back byte for byte.
func FuzzAnswers(f *testing.F) {
	f.Add(200, []byte(`{"resource_provider_generation": 4611686018427387904, "inventories": {"CUSTOM_X": {"total": 1}}}`))
	f.Add(200, []byte(`{"resource_provider_generation": 1, "traits": ["A"], "aggregates": [], "usages": {"X": 1}}`))
	f.Add(200, []byte(`{"resource_providers": [{"uuid": "u", "generation": 1e400, "links": []}]}`))
	f.Add(200, []byte(`{"uuid": "u", "name": "n", "generation": "7"}`))
	f.Add(409, []byte(`{"errors": [{"code": "placement.concurrent_update"}]}`))
	f.Add(503, []byte(`<html>busy</html>`))
	srv := &answerServer{status: 200, body: []byte(`{}`)}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx := context.Background()
	// Retries still run, without their backoff: a 5xx answer would
	// otherwise cost each call up to 0.7 s, some 6 inputs a second.
	fast := placement.Retry{Base: time.Microsecond, Max: time.Microsecond}
	pc, err := placement.New(ctx, placement.Config{Endpoint: ts.URL, Token: "admin", Retry: fast})
	if err != nil {
		f.Fatal(err)
	}
	statuses := []int{200, 201, 204, 400, 404, 409, 500}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		srv.mu.Lock()
		srv.status, srv.body = statuses[uint(status)%uint(len(statuses))], body
		srv.mu.Unlock()
		sendable := func(g placement.Generation, err error) {
			if err != nil || g == "" {
				return
			}
			if b, merr := g.MarshalJSON(); merr != nil || string(b) != string(g) {
				t.Fatalf("generation %q cannot be sent back: %q %v", g, b, merr)
			}
		}
		u := "5a000000-0000-4000-8000-000000000001"
		g, _, err := pc.Inventories(ctx, u)
		sendable(g, err)
		g, _, err = pc.Traits(ctx, u)
		sendable(g, err)
		g, _, err = pc.Aggregates(ctx, u)
		sendable(g, err)
		g, _, err = pc.Usages(ctx, u)
		sendable(g, err)
		p, err := pc.GetProvider(ctx, u)
		sendable(p.Generation, err)
		ps, err := pc.ListProviders(ctx, nil)
		for _, p := range ps {
			if err == nil && (p.UUID == "" || p.Generation == "") {
				t.Fatalf("listed provider without uuid or generation: %+v", p)
			}
		}
		_, err = pc.SetTraits(ctx, u, "1", []string{"CUSTOM_X"})
		sendable("1", err)
	})
}
