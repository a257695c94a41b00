package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// crashRig is a world the fake plugin fetches on every call, changed
// by the test while `engine run` is being killed.
type crashRig struct {
	mu    sync.Mutex
	nodes []hostabi.Node
}

func (w *crashRig) set(nodes []hostabi.Node) { w.mu.Lock(); w.nodes = nodes; w.mu.Unlock() }

func (w *crashRig) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	w.mu.Lock()
	nodes := slices.Clone(w.nodes)
	w.mu.Unlock()
	var v any = map[string]any{"nodes": nodes}
	if req.URL.Path == "/instances" {
		v = map[string]any{"instances": []hostabi.Instance{}}
	}
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(v)
}

// randomWorld: of n candidate nodes, each is enrolled or not, and has
// CUSTOM_GPU or not, at random: every kill may cut a create, a trait
// write, an inventory write, an aggregate write or a delete.
func randomWorld(rng *rand.Rand, u func(int) string, n int) []hostabi.Node {
	var out []hostabi.Node
	for i := range n {
		if i >= n/2 && rng.IntN(3) == 0 {
			continue // not enrolled (or deleted) now
		}
		node := hostabi.Node{UUID: u(i), ResourceClass: "gold", PowerState: "power off", ProvisionState: "available",
			Maintenance: rng.IntN(4) == 0}
		if rng.IntN(2) == 0 {
			node.Traits = []string{"CUSTOM_GPU"}
		}
		out = append(out, node)
	}
	return out
}

// killingProxy forwards to Placement and kills the engine right after
// its target-th write has reached Placement, before the answer gets back:
// the moment where a lost record leaves a stale trait or an unmarked
// provider behind.
type killingProxy struct {
	next   http.Handler
	mu     sync.Mutex
	writes int
	target int
	kill   func()
	killed chan struct{}
}

func (p *killingProxy) arm(target int, kill func()) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes, p.target, p.kill, p.killed = 0, target, kill, make(chan struct{})
	return p.killed
}

func (p *killingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.next.ServeHTTP(w, r)
	if r.Method == "GET" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes++
	if p.writes == p.target && p.kill != nil {
		p.kill()
		p.kill = nil
		close(p.killed)
	}
}

// TestKill9AtRandomMomentsLeavesPlacementExact runs `engine run` against
// the real Placement and kills it with SIGKILL 20 times while the world
// changes under it: each time right after a random write of its cycle
// landed (a create, a trait, inventory or aggregate write, a delete), or
// at a random moment when the cycle writes less. Then one engine
// converges and Placement must equal the desired world: no stray
// CUSTOM_GPU, no unmarked or extra provider, every reservation right.
func TestKill9AtRandomMomentsLeavesPlacementExact(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	u := func(i int) string { return uuidFor(t.Name(), i) }
	const n = 40
	world := &crashRig{}
	world.set(randomWorld(rng, u, n))
	srv := httptest.NewServer(world)
	defer srv.Close()
	target, _ := neturl.Parse(url)
	proxy := &killingProxy{next: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(proxy)
	defer front.Close()
	id := fmt.Sprintf("kill-%x", os.Getpid())
	cfg := writeConfig(t, id, front.URL, plugin, fmt.Sprintf(`[plugin.services]
world = %q
[plugin.config]
world = "world"
`, srv.URL))
	// An aggregate, so that a kill may cut an aggregate write too; and
	// short intervals, so that a run makes several cycles.
	text, _ := os.ReadFile(cfg)
	fixed := strings.Replace(string(text), "marker_traits = [\"COMPUTE_NODE\"]",
		"marker_traits = [\"COMPUTE_NODE\"]\naggregates = [\"2f5b1f0e-3c1a-4d8e-9b7a-6c5d4e3f2a1b\"]", 1)
	fixed = strings.Replace(fixed, `interval = "5s"`, `interval = "1s"`, 1)
	os.WriteFile(cfg, []byte(fixed), 0o644)

	struck := 0
	for range 20 {
		cmd := exec.Command(engineBin(t), "run", "--config", cfg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Armed once started: a write of the last engine still in flight
		// would otherwise call kill before cmd.Process exists.
		killed := proxy.arm(1+rng.IntN(12), func() { cmd.Process.Kill() })
		select {
		case <-killed:
			struck++
		case <-time.After(time.Duration(4000+rng.IntN(4000)) * time.Millisecond):
			proxy.arm(0, nil)
			cmd.Process.Kill()
		}
		cmd.Wait()
		world.set(randomWorld(rng, u, n)) // changed while the engine is down
	}

	final := randomWorld(rng, u, n)
	world.set(final)
	for range 3 { // a deletion needs two proofs in consecutive cycles
		onceAllowingErrors(t, cfg)
	}
	if r := once(t, cfg); r.Created+r.Updated+r.Deleted != 0 {
		t.Fatalf("not converged after the kills: %+v", r)
	}
	owner := "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_"))
	want := map[string]hostabi.Node{}
	for _, node := range final {
		want[node.UUID] = node
	}
	stray, unmarked, extra := 0, 0, 0
	for i := range n {
		p, ok := readProvider(t, url, u(i))
		node, wanted := want[u(i)]
		switch {
		case !ok && wanted:
			t.Errorf("node %d: provider missing", i)
		case ok && !wanted:
			extra++
			if !slices.Contains(p.Traits, owner) {
				unmarked++
			}
			t.Errorf("node %d: provider of a deleted node still there: %+v", i, p)
		case ok:
			wantTraits := append([]string{owner, "COMPUTE_NODE"}, node.Traits...)
			if !sameStrings(p.Traits, wantTraits) {
				stray++
				t.Errorf("node %d: traits %v, want %v", i, p.Traits, wantTraits)
			}
			reserved := int64(0)
			if node.Maintenance {
				reserved = 1
			}
			if inv := p.Inventories["CUSTOM_GOLD"]; inv.Total != 1 || inv.Reserved != reserved {
				t.Errorf("node %d: inventory %+v, want reserved %d", i, inv, reserved)
			}
		}
	}
	t.Logf("after 20 kills (%d right after a write) and one clean run: %d stray traits, %d unmarked providers, %d extra providers",
		struck, stray, unmarked, extra)
	if struck < 8 {
		t.Errorf("only %d of 20 kills struck right after a write: the test did not test much", struck)
	}
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
