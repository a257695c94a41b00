package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// ironicConfig writes an engine config whose plugin is ironic.wasm with
// baremetal granted at ironicURL; pluginTOML goes in [plugin.config] and
// scopeTOML (e.g. `shards = ["a"]`) in [scope].
func ironicConfig(t *testing.T, id, placementURL, plugin, ironicURL, pluginTOML, scopeTOML string) string {
	t.Helper()
	extra := fmt.Sprintf("\n[plugin.services]\nbaremetal = %q\n\n[plugin.config]\n%s\n\n[scope]\n%s\n",
		ironicURL, pluginTOML, scopeTOML)
	return writeConfig(t, id, placementURL, plugin, extra)
}

// ironicOnce runs one cycle and returns its report whatever the outcome.
func ironicOnce(t *testing.T, cfg string) (report, result) {
	t.Helper()
	res := runEngine(t, "once", "--config", cfg, "--json")
	var r report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("engine once: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	return r, res
}

// ironicWant is what Placement must hold for one node.
type ironicWant struct {
	uuid, rc string
	reserved int64
	traits   []string // the node's own; the owner marker and COMPUTE_NODE are added
}

// ironicCheck compares every listed provider with Placement and checks
// that absent ones are absent.
func ironicCheck(t *testing.T, placementURL, engineID string, want []ironicWant, absent []string) {
	t.Helper()
	owner := engine.OwnerTrait(engineID)
	for _, w := range want {
		p, ok := readProvider(t, placementURL, w.uuid)
		if !ok {
			t.Errorf("node %s: no provider in Placement", w.uuid)
			continue
		}
		rc := "CUSTOM_" + strings.ToUpper(strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, w.rc))
		inv := inventory{Total: 1, Reserved: w.reserved, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
		if p.Name != w.uuid || len(p.Inventories) != 1 || p.Inventories[rc] != inv {
			t.Errorf("node %s: provider %q inventories %+v, want %s=%+v", w.uuid, p.Name, p.Inventories, rc, inv)
		}
		traits := append([]string{owner, "COMPUTE_NODE"}, w.traits...)
		slices.Sort(traits)
		got := slices.Clone(p.Traits)
		slices.Sort(got)
		if !slices.Equal(got, traits) {
			t.Errorf("node %s: traits %v, want %v", w.uuid, got, traits)
		}
	}
	for _, uuid := range absent {
		if _, ok := readProvider(t, placementURL, uuid); ok {
			t.Errorf("node %s: has a provider, want none", uuid)
		}
	}
}

// ironicProxy stands between the plugin and the real Ironic to inject the
// faults Ironic cannot be asked for: before each GET /v1/nodes (n counts
// them from 1) onList may answer instead (return true) or change the
// request or Ironic; rewrite may change every response.
type ironicProxy struct {
	url     string
	mu      sync.Mutex
	lists   []string // request URIs of GET /v1/nodes, in order
	onList  func(w http.ResponseWriter, r *http.Request, n int) bool
	rewrite func(*http.Response)
}

func newIronicProxy(t *testing.T, ironicURL string) *ironicProxy {
	t.Helper()
	target, err := url.Parse(ironicURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &ironicProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.rewrite != nil {
			p.rewrite(resp)
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/nodes" {
			p.mu.Lock()
			p.lists = append(p.lists, r.URL.RequestURI())
			n := len(p.lists)
			p.mu.Unlock()
			if p.onList != nil && p.onList(w, r, n) {
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *ironicProxy) listed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lists)
}

// ironicQuery returns one query parameter of a request URI.
func ironicQuery(t *testing.T, uri, key string) string {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(key)
}

// ironicNoWrites fails unless the report shows a cycle that wrote nothing.
func ironicNoWrites(t *testing.T, r report, res result, wantErr string) {
	t.Helper()
	if res.code == 0 || r.Created+r.Updated+r.Deleted != 0 || !strings.Contains(strings.Join(r.ErrorMessages(), "\n"), wantErr) {
		t.Fatalf("want a failed cycle without writes mentioning %q: exit %d, %+v\nstderr %s", wantErr, res.code, r, res.stderr)
	}
}

// availableGold enrolls n baremetal-gold nodes named prefix0… (in shard,
// if not "") and makes them available; it returns their uuids in order.
func availableGold(t *testing.T, c *ironictest.Client, n int, prefix, shard string) []string {
	t.Helper()
	uuids := make([]string, n)
	for i := range uuids {
		uuids[i] = c.Create(t, ironictest.Spec{Name: fmt.Sprintf("%s%d", prefix, i), ResourceClass: "baremetal-gold", Shard: shard})
		c.Available(t, uuids[i])
	}
	return uuids
}
