package soak

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// gate sits in front of the fake Placement and gives the harness a hook
// on the engine's n-th write of a cycle: where a crash, a graceful stop
// or another writer strikes mid-cycle. The engine talks only to the gate;
// the harness's own requests go to the fake directly.
type gate struct {
	fake     *placementfake.Server
	srv      *httptest.Server
	inflight atomic.Int64

	mu      sync.Mutex
	writes  int
	onWrite func(n int) // called before the n-th write is served
}

func newGate(fake *placementfake.Server) *gate {
	g := &gate{fake: fake}
	g.srv = httptest.NewServer(g)
	return g
}

func (g *gate) URL() string { return g.srv.URL }
func (g *gate) Close()      { g.srv.Close() }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.inflight.Add(1)
	defer g.inflight.Add(-1)
	if r.Method != http.MethodGet {
		g.mu.Lock()
		g.writes++
		n, hook := g.writes, g.onWrite
		g.mu.Unlock()
		if hook != nil {
			hook(n)
		}
	}
	g.fake.ServeHTTP(w, r)
}

// arm resets the write count and sets the hook for the coming cycle.
func (g *gate) arm(hook func(n int)) {
	g.mu.Lock()
	g.writes, g.onWrite = 0, hook
	g.mu.Unlock()
}

// drain waits until no request is being served.
func (g *gate) drain() {
	deadline := time.Now().Add(2 * time.Second)
	for g.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// settle waits until no request of a cancelled engine is still being
// served, so none of them lands in the next cycle's request log.
func (g *gate) settle() {
	deadline := time.Now().Add(2 * time.Second)
	for {
		time.Sleep(5 * time.Millisecond) // a request already sent may still be on its way in
		if g.inflight.Load() == 0 || time.Now().After(deadline) {
			return
		}
	}
}
