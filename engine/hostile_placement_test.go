package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
)

// hostileListing puts a proxy in front of the rig's fake that, while on,
// answers every provider listing with body; the rest reaches the fake.
func (r *rig) hostileListing(body func() string) *atomic.Bool {
	on := new(atomic.Bool)
	u, _ := url.Parse(r.fake.URL())
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		if on.Load() && q.Method == "GET" && q.URL.Path == "/resource_providers" {
			w.Write([]byte(body()))
			return
		}
		proxy.ServeHTTP(w, q)
	}))
	r.t.Cleanup(srv.Close)
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: srv.URL, Token: "admin", MaxProviders: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	r.pc = pc
	r.eng = engine.New(r.src, pc, r.pol, r.opts, r.state, nil)
	return on
}

// A listing Placement could not have sent fails the cycle with an error
// naming what was wrong, and the engine writes nothing: no provider is
// "deleted", none is recreated, no generation is sent back.
func TestHostileListingsWriteNothing(t *testing.T) {
	many := func() string {
		var b strings.Builder
		b.WriteString(`{"resource_providers": [`)
		for i := range 1001 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"uuid": "10000000-0000-4000-8000-%012d", "generation": 1}`, i)
		}
		b.WriteString("]}")
		return b.String()
	}
	for _, c := range []struct{ name, want, body string }{
		{"no key", `answer without "resource_providers"`, `{}`},
		{"path uuid", `is not a uuid`, `{"resource_providers": [{"uuid": "../resource_providers/x", "generation": 1}]}`},
		{"string generation", `is not an integer`, `{"resource_providers": [{"uuid": "10000000-0000-4000-8000-000000000001", "generation": "` + strings.Repeat("x", 1<<20) + `"}]}`},
		{"too many", `more than placement.max_providers (1000)`, many()},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 3)
			r.cleanCycle()
			on := r.hostileListing(func() string { return c.body })
			on.Store(true)
			r.src.set(func(s *source) { s.nodes = s.nodes[:1] }) // two nodes gone: deletions pending
			mark := len(r.fake.Requests())
			rep := r.cycle()
			if len(rep.Errors) == 0 || !strings.Contains(fmt.Sprint(rep.Errors), c.want) {
				t.Fatalf("errors %v; want %q", rep.Errors, c.want)
			}
			if rep.Deleted != 0 || rep.Created != 0 || rep.Updated != 0 {
				t.Fatalf("report %+v: want nothing done", rep)
			}
			for _, q := range r.fake.Requests()[mark:] {
				if q.Method != "GET" {
					t.Fatalf("%s %s sent after a refused listing", q.Method, q.Path)
				}
			}
		})
	}
}
