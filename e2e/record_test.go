package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// recordRig is a fleet whose world the test changes (a world service the
// fake plugin reads each call), one etcd and the real Placement, for
// engines that share the ownership record.
type recordRig struct {
	t         *testing.T
	placement string
	etcd      string
	plugin    string
	world     *crashRig
	worldURL  string
	u         func(int) string
	n         int
	kube      *kubeFleet // set: coordinate through Kubernetes, etcd is its host:port
}

const (
	recTTL        = time.Second
	recInterval   = 2 * time.Second
	recPartitions = 16
)

func newRecordRig(t *testing.T, n int) *recordRig {
	r := &recordRig{t: t, placement: placementtest.Shared(t), etcd: etcdtest.Start(t),
		plugin: plugintest.Build(t, "plugins/fake"), world: &crashRig{}, n: n}
	r.u = func(i int) string { return uuidFor(t.Name(), i) }
	srv := httptest.NewServer(r.world)
	t.Cleanup(srv.Close)
	r.worldURL = srv.URL
	return r
}

// gpuWorld: all n nodes enrolled, each with CUSTOM_GPU or not.
func gpuWorld(rng *rand.Rand, u func(int) string, n int) []hostabi.Node {
	out := make([]hostabi.Node, n)
	for i := range out {
		out[i] = hostabi.Node{UUID: u(i), ResourceClass: "gold", PowerState: "power off", ProvisionState: "available"}
		if rng.IntN(2) == 0 {
			out[i].Traits = []string{"CUSTOM_GPU"}
		}
	}
	return out
}

// config is engine id's, reaching Placement at endpoint; withCoord adds
// the fleet's [coord].
func (r *recordRig) config(id, endpoint string, withCoord bool) string {
	extra := fmt.Sprintf("[plugin.services]\nworld = %q\n[plugin.config]\nworld = \"world\"\n", r.worldURL)
	switch {
	case withCoord && r.kube != nil:
		extra = r.kube.section(r.t, r.etcd, recPartitions, recTTL, fmt.Sprintf("/rec-%x/", os.Getpid())) + "\n" + extra
	case withCoord:
		extra = fmt.Sprintf("[coord]\netcd = [%q]\npartitions = %d\nlease_ttl = %q\nprefix = \"/rec-%x/\"\n\n",
			r.etcd, recPartitions, recTTL, os.Getpid()) + extra
	}
	cfg := writeConfig(r.t, id, endpoint, r.plugin, extra)
	text, _ := os.ReadFile(cfg)
	fixed := strings.Replace(string(text), `interval = "5s"`, fmt.Sprintf("interval = %q", recInterval), 1)
	if err := os.WriteFile(cfg, []byte(fixed), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return cfg
}

// run starts `engine run` with cfg; it is killed when the test ends.
func (r *recordRig) run(cfg string) *exec.Cmd {
	logFile, err := os.Create(filepath.Join(filepath.Dir(cfg), "engine.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(engineBin(r.t), "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if r.t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			r.t.Logf("log of %s:\n%s", cfg, tailString(string(b), 4000))
		}
	})
	return cmd
}

// mismatch compares every provider with the world: the traits must be
// COMPUTE_NODE, one owner marker of owners and the node's traits. It
// returns the stray CUSTOM_GPU count and the first other difference.
func (r *recordRig) mismatch(owners ...string) (stray int, why string) {
	want := map[string]hostabi.Node{}
	r.world.mu.Lock()
	nodes := slices.Clone(r.world.nodes)
	r.world.mu.Unlock()
	for _, n := range nodes {
		want[n.UUID] = n
	}
	for i := range r.n {
		p, ok := readProvider(r.t, r.placement, r.u(i))
		if !ok {
			why = fmt.Sprintf("node %d: no provider", i)
			continue
		}
		node := want[r.u(i)]
		if slices.Contains(p.Traits, "CUSTOM_GPU") && !slices.Contains(node.Traits, "CUSTOM_GPU") {
			stray++
		}
		marked := slices.ContainsFunc(owners, func(o string) bool { return slices.Contains(p.Traits, engine.OwnerTrait(o)) })
		if !marked || len(p.Traits) != 2+len(node.Traits) {
			why = fmt.Sprintf("node %d: traits %v, node %v", i, p.Traits, node.Traits)
		}
	}
	if stray > 0 && why == "" {
		why = fmt.Sprintf("%d stray CUSTOM_GPU", stray)
	}
	return stray, why
}

// converge waits until Placement matches the world, or within passes;
// it returns the stray traits left.
func (r *recordRig) converge(within time.Duration, owners ...string) (int, string) {
	deadline := time.Now().Add(within)
	for {
		stray, why := r.mismatch(owners...)
		if why == "" || time.Now().After(deadline) {
			return stray, why
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// A take-over from a killed engine, five times: engine b runs throughout; each
// round a new engine a joins, takes part of the fleet and adds
// CUSTOM_GPU where the world has it, is killed (-9) and never restarted,
// the world changes twice while its lease runs out, and b takes its
// nodes over. Reading a's record, b must remove every CUSTOM_GPU a added
// that the world dropped: 0 stray traits once b has converged.
func TestTakeOverLeavesNoStrayTraits(t *testing.T) { takeOverLeavesNoStrays(t, newRecordRig(t, 40)) }

func takeOverLeavesNoStrays(t *testing.T, r *recordRig) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	r.world.set(gpuWorld(rng, r.u, r.n))
	b := fmt.Sprintf("rec%x-b", os.Getpid())
	r.run(r.config(b, r.placement, true))
	if _, why := r.converge(30*time.Second, b); why != "" {
		t.Fatalf("b alone did not converge: %s", why)
	}
	total := 0
	for round := range 5 {
		a := fmt.Sprintf("rec%x-a%d", os.Getpid(), round)
		cmd := r.run(r.config(a, r.placement, true))
		r.world.set(gpuWorld(rng, r.u, r.n))
		held, handover := r.waitHolds(a, 30*time.Second, b)
		total += handover
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		killed := time.Now()
		r.world.set(gpuWorld(rng, r.u, r.n))
		time.Sleep(recTTL / 2)
		r.world.set(gpuWorld(rng, r.u, r.n))
		stray, why := r.converge(40*time.Second, b)
		t.Logf("round %d: %d stray after the hand-over to %s (%d providers); killed; b converged after %s: %d stray CUSTOM_GPU %s",
			round+1, handover, a, held, time.Since(killed).Round(100*time.Millisecond), stray, why)
		total += stray
		if why != "" && stray == 0 {
			t.Fatalf("round %d: b did not converge: %s", round+1, why)
		}
	}
	if total > 0 {
		t.Fatalf("%d stray CUSTOM_GPU traits over 5 hand-overs and take-overs", total)
	}
}

// waitHolds waits until engine a manages some providers and Placement
// matches the world under a and peers; it returns how many a holds and
// the stray CUSTOM_GPU left by the hand-over to a, if it never matched.
func (r *recordRig) waitHolds(a string, within time.Duration, peers ...string) (held, stray int) {
	owners := append([]string{a}, peers...)
	deadline := time.Now().Add(within)
	for {
		var why string
		stray, why = r.mismatch(owners...)
		held = 0
		for i := range r.n {
			if p, ok := readProvider(r.t, r.placement, r.u(i)); ok && slices.Contains(p.Traits, engine.OwnerTrait(a)) {
				held++
			}
		}
		if why == "" && held > 0 {
			return held, 0
		}
		if time.Now().After(deadline) {
			if held == 0 || stray == 0 {
				r.t.Fatalf("%s holds %d providers, world not matched: %s", a, held, why)
			}
			r.t.Logf("hand-over to %s: %s", a, why)
			return held, stray
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// allGPU is the world of n nodes, all with CUSTOM_GPU or all without.
func (r *recordRig) allGPU(gpu bool) {
	nodes := make([]hostabi.Node, r.n)
	for i := range nodes {
		nodes[i] = hostabi.Node{UUID: r.u(i), ResourceClass: "gold", PowerState: "power off", ProvisionState: "available"}
		if gpu {
			nodes[i].Traits = []string{"CUSTOM_GPU"}
		}
	}
	r.world.set(nodes)
}

// stopped ends cmd with SIGTERM and waits for it.
func stopped(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

// respell names the same Placement another way: by host name instead of
// IP, with a trailing slash.
func respell(t *testing.T, url string) string {
	other := strings.Replace(url, "127.0.0.1", "localhost", 1) + "/"
	if other == url+"/" {
		t.Fatalf("cannot respell %s", url)
	}
	return other
}

// The same fleet through another spelling of the endpoint keeps its
// record: with [coord] etcd (any spelling: the record follows the
// Placement's identity trait) and with the state file alone (spellings a
// parse can see through). Each time a trait dropped afterwards is removed.
func TestSecondSpellingKeepsTheRecord(t *testing.T) {
	for _, withCoord := range []bool{true, false} {
		t.Run(map[bool]string{true: "etcd", false: "file"}[withCoord], func(t *testing.T) { secondSpelling(t, withCoord) })
	}
}

func secondSpelling(t *testing.T, withCoord bool) {
	r := newRecordRig(t, 6)
	id := fmt.Sprintf("rec%x-spell-%t", os.Getpid(), withCoord)
	first, second := r.placement, respell(t, r.placement)
	if !withCoord {
		second = strings.ToUpper(r.placement[:4]) + r.placement[4:] + "/"
	}
	r.allGPU(true)
	cfg := r.config(id, first, withCoord)
	if _, why := r.cycleUntilConverged(cfg, withCoord, id); why != "" {
		t.Fatalf("first spelling: %s", why)
	}
	// With etcd, a new config dir: a new state file, so only etcd holds
	// the record. Without, the same file, found under another spelling.
	cfg2 := r.config(id, second, withCoord)
	if !withCoord {
		cfg2 = cfg
		text, _ := os.ReadFile(cfg)
		moved := strings.Replace(string(text), fmt.Sprintf("endpoint = %q", first), fmt.Sprintf("endpoint = %q", second), 1)
		if err := os.WriteFile(cfg, []byte(moved), 0o644); err != nil || moved == string(text) {
			t.Fatalf("config not respelt: %v", err)
		}
	}
	r.allGPU(false)
	if stray, _ := r.cycleUntilConverged(cfg2, withCoord, id); stray != 0 {
		t.Fatalf("coord %t: %d stray CUSTOM_GPU after moving to %s", withCoord, stray, second)
	}
	t.Logf("coord %t: %s then %s: CUSTOM_GPU removed from all %d providers", withCoord, first, second, r.n)
}

// cycleUntilConverged runs the engine of cfg (a daemon with etcd, else
// once) until Placement matches the world, and returns the stray traits
// left and the first difference if it never does.
func (r *recordRig) cycleUntilConverged(cfg string, daemon bool, id string) (int, string) {
	if !daemon {
		for range 2 {
			once(r.t, cfg)
		}
		return r.mismatch(id)
	}
	cmd := r.run(cfg)
	defer stopped(cmd)
	return r.converge(20*time.Second, id)
}

// addTrait adds one trait to a provider, as an operator might.
func addTrait(t *testing.T, base, uuid, trait string) {
	t.Helper()
	var cur struct {
		Traits     []string `json:"traits"`
		Generation int64    `json:"resource_provider_generation"`
	}
	if code, b := placementDo(t, base, "PUT", "/traits/"+trait, nil); code != 201 && code != 204 {
		t.Fatalf("PUT trait %s: %d %s", trait, code, b)
	}
	placementGet(t, base, "/resource_providers/"+uuid+"/traits", &cur)
	body := map[string]any{"traits": append(cur.Traits, trait), "resource_provider_generation": cur.Generation}
	if code, b := placementDo(t, base, "PUT", "/resource_providers/"+uuid+"/traits", body); code != 200 {
		t.Fatalf("PUT traits of %s: %d %s", uuid, code, b)
	}
}

// reown runs `engine reown --json` with args and decodes its answer.
func (r *recordRig) reown(cfg string, args ...string) (strays, selected []string, removed int) {
	r.t.Helper()
	res := runEngine(r.t, append([]string{"reown", "--config", cfg, "--json"}, args...)...)
	var out struct {
		Strays, Selected []engine.Stray
		Removed          int
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 {
		r.t.Fatalf("engine reown %v: exit %d: %v\n%s%s", args, res.code, err, res.stdout, res.stderr)
	}
	for _, s := range out.Strays {
		strays = append(strays, fmt.Sprintf("%s %s", s.Node, s.Value))
	}
	for _, s := range out.Selected {
		selected = append(selected, fmt.Sprintf("%s %s", s.Node, s.Value))
	}
	return strays, selected, out.Removed
}

// A fleet whose record was deleted (the etcd keys and the state file):
// the engine keeps the CUSTOM_GPU the source dropped; engine reown lists
// exactly those and an operator's own trait (nothing explains it), and
// removes only what it is told.
func TestReownAfterTheRecordWasDeleted(t *testing.T) {
	r := newRecordRig(t, 6)
	id := fmt.Sprintf("rec%x-reown", os.Getpid())
	cfg := r.config(id, r.placement, true)
	r.allGPU(true)
	if _, why := r.cycleUntilConverged(cfg, true, id); why != "" {
		t.Fatalf("first run: %s", why)
	}
	addTrait(t, r.placement, r.u(1), "CUSTOM_OPERATOR")
	r.deleteRecord(cfg)
	r.allGPU(false)
	if stray, _ := r.cycleUntilConverged(cfg, true, id); stray != r.n {
		t.Fatalf("%d stray CUSTOM_GPU without a record, want %d: the test tests nothing", stray, r.n)
	}

	var want []string
	for i := range r.n {
		want = append(want, r.u(i)+" CUSTOM_GPU")
		if i == 1 {
			want = append(want, r.u(i)+" CUSTOM_OPERATOR")
		}
	}
	strays, selected, removed := r.reown(cfg)
	if fmt.Sprint(strays) != fmt.Sprint(want) || len(selected)+removed != 0 {
		t.Fatalf("plan: strays %v (want %v), selected %v, removed %d", strays, want, selected, removed)
	}
	_, selected, removed = r.reown(cfg, "CUSTOM_GPU")
	if len(selected) != r.n || removed != r.n {
		t.Fatalf("reown CUSTOM_GPU: selected %v, removed %d", selected, removed)
	}
	for i := range r.n {
		p, _ := readProvider(t, r.placement, r.u(i))
		if slices.Contains(p.Traits, "CUSTOM_GPU") || (i == 1) != slices.Contains(p.Traits, "CUSTOM_OPERATOR") {
			t.Fatalf("node %d after reown: %v", i, p.Traits)
		}
	}
	if strays, _, _ := r.reown(cfg); fmt.Sprint(strays) != fmt.Sprint([]string{r.u(1) + " CUSTOM_OPERATOR"}) {
		t.Fatalf("strays after reown: %v", strays)
	}
	t.Logf("reown listed %d strays (%d CUSTOM_GPU, 1 operator's), removed the %d named", len(want), r.n, r.n)
}

// deleteRecord deletes the fleet's record: its keys in etcd and the
// engine's state file.
func (r *recordRig) deleteRecord(cfg string) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.etcd}, DialTimeout: 5 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	defer cli.Close()
	del, err := cli.Delete(context.Background(), fmt.Sprintf("/rec-%x/record/", os.Getpid()), clientv3.WithPrefix())
	if err != nil || del.Deleted == 0 {
		r.t.Fatalf("delete the record in etcd: %d keys, %v", del.Deleted, err)
	}
	if err := os.Remove(filepath.Join(filepath.Dir(cfg), "state.json")); err != nil {
		r.t.Fatal(err)
	}
}
