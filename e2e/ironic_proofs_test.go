package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestIronicProvesManyUnlistedNodesWithOneListing: the scope shrinks
// away from 24 nodes of the real Ironic; ironic.wasm proves them present
// with one uuid-only listing, not 24 GETs, and proves the 3 then deleted
// in Ironic gone the same way, so that the engine deletes their
// providers after the second proof.
func TestIronicProvesManyUnlistedNodesWithOneListing(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	var ids []string
	for i := range 24 {
		ids = append(ids, c.Create(t, ironictest.Spec{Name: fmt.Sprintf("proof-%d", i), ResourceClass: "baremetal-gold", Shard: "in"}))
	}
	proxy := newCountingProxy(t, ironicURL)
	id := fmt.Sprintf("proofs-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "", `shards = ["in"]`)
	if r, _ := ironicOnce(t, cfg); r.Created != 24 {
		t.Fatalf("first cycle: %+v", r)
	}
	out := ironicConfig(t, id, placementURL, plugin, proxy.url, "", `shards = ["out"]`)
	copyState(t, cfg, out)
	proxy.reset()
	if r, _ := ironicOnce(t, out); r.Deleted != 0 || len(r.Errors) != 0 {
		t.Fatalf("scope shrunk: %+v", r)
	}
	if gets, lists := proxy.counts(); gets != 0 || lists == 0 {
		t.Fatalf("24 unlisted nodes: %d GETs of one node, %d uuid-only listings; want 0 and at least 1", gets, lists)
	}
	for _, u := range ids[:3] {
		c.Delete(t, u)
	}
	ironicOnce(t, out) // first proof of the 3
	r, _ := ironicOnce(t, out)
	if r.Deleted != 3 {
		t.Fatalf("second proof: %+v", r)
	}
	for _, u := range ids[:3] {
		if _, ok := readProvider(t, placementURL, u); ok {
			t.Fatalf("provider %s of a deleted node still there", u)
		}
	}
	if _, ok := readProvider(t, placementURL, ids[3]); !ok {
		t.Fatal("provider of a node present out of scope deleted")
	}
}

// countingProxy forwards to Ironic and counts GETs of one node and
// uuid-only listings.
type countingProxy struct {
	url         string
	mu          sync.Mutex
	gets, lists int
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/nodes/"):
			p.gets++
		case r.URL.Path == "/v1/nodes" && r.URL.Query().Get("fields") == "uuid":
			p.lists++
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *countingProxy) reset() { p.mu.Lock(); p.gets, p.lists = 0, 0; p.mu.Unlock() }

func (p *countingProxy) counts() (gets, lists int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gets, p.lists
}
