package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// lastReport is the daemon's GET /api/v1/report.
type lastReport struct {
	Cycles  int
	Running bool
}

func apiReport(t *testing.T, addr string) lastReport {
	t.Helper()
	code, body := get(t, "http://"+addr+"/api/v1/report")
	var r lastReport
	if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("GET /api/v1/report: %d %s", code, body)
	}
	return r
}

// waitCycles polls the daemon's report until it counts at least n cycles.
func waitCycles(t *testing.T, addr string, n int, logs *syncBuffer) lastReport {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, body := get(t, "http://"+addr+"/api/v1/report"); code == 200 {
			var r lastReport
			if json.Unmarshal([]byte(body), &r) == nil && r.Cycles >= n && !r.Running {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cycle %d of engine run:\n%s", n, tail(logs.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// explained is the part of `engine explain -o json` compared between the
// daemon's answer and a direct read.
type explained struct {
	Node      string
	Why       json.RawMessage
	Outcome   json.RawMessage
	Source    json.RawMessage
	Placement json.RawMessage
	Writes    json.RawMessage `json:"next_writes"`
	Owner     string
}

// `engine plan` and `engine explain NODE` answer while `engine run` holds
// the state: through the daemon's API on server.listen, with what a direct
// read of the same state and Placement says; nothing the daemon does
// changes for it. A cycle asked for over the API starts at once and
// repairs the drift the plan showed.
func TestPlanAndExplainThroughTheRunningDaemon(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	other := fmt.Sprintf("CUSTOM_RPENGINE_OWNER_OTHER_%X", os.Getpid())
	ownedByOther(t, url, u(2), other)
	nodes := []worldNode{
		{uuid: u(0), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(1), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(2), rc: "gold", power: "power off", provision: "available"},
		{uuid: u(3), rc: "gold", power: "power off", provision: "cleaning"},
	}
	addr := freeAddr(t)
	id := fmt.Sprintf("api-%x", os.Getpid())
	cfg := writeConfig(t, id, url, plugin, "\n[server]\nlisten = \""+addr+"\"\n\n"+worldTOML(nodes, nil))
	b, _ := os.ReadFile(cfg)
	text := strings.Replace(string(b), `interval = "5s"`, `interval = "1h"`, 1) // cycles only when asked
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same engine without server.listen: a direct read of its state.
	direct := filepath.Join(filepath.Dir(cfg), "direct.toml")
	if err := os.WriteFile(direct, []byte(strings.Replace(text, "listen = \""+addr+"\"", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	_, logs := startDaemon(t, cfg)
	first := waitCycles(t, addr, 1, logs)

	// Drift planted in Placement: u(1) loses COMPUTE_NODE.
	var tr struct {
		Traits     []string `json:"traits"`
		Generation int      `json:"resource_provider_generation"`
	}
	placementGet(t, url, "/resource_providers/"+u(1)+"/traits", &tr)
	tr.Traits = slices.DeleteFunc(tr.Traits, func(s string) bool { return s == "COMPUTE_NODE" })
	if code, body := placementDo(t, url, "PUT", "/resource_providers/"+u(1)+"/traits",
		map[string]any{"resource_provider_generation": tr.Generation, "traits": tr.Traits}); code != 200 {
		t.Fatalf("plant drift: %d %s", code, body)
	}

	viaAPI, res := runJSON(t, "plan", cfg)
	if res.code != 1 || !strings.Contains(res.stderr, "plan made by the engine running at server.listen") {
		t.Fatalf("plan beside engine run: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	got := byNode(viaAPI)
	if !strings.HasPrefix(got[u(1)], "updated") || !strings.Contains(got[u(1)], "COMPUTE_NODE") ||
		!strings.Contains(got[u(2)], "owned by "+other) || viaAPI.Failed != 1 {
		t.Fatalf("plan through the daemon: failed %d, %v", viaAPI.Failed, got)
	}
	directPlan, res := runJSON(t, "plan", direct)
	if strings.Contains(res.stderr, "engine running at") || res.code != 1 {
		t.Fatalf("direct plan: exit %d\n%s", res.code, res.stderr)
	}
	// The other engine's provider may be known unchanged from a listing
	// (the daemon's memory, or the bulk listing of other owners a direct
	// plan makes, engine/takeover.go): that note aside, the plans agree.
	unnoted := func(m map[string]string) map[string]string {
		out := maps.Clone(m)
		for n, s := range out {
			out[n] = strings.Replace(s, " (unchanged since last read)", "", 1)
		}
		return out
	}
	same := unnoted(got)
	if want := unnoted(byNode(directPlan)); !maps.Equal(same, want) || viaAPI.Failed != directPlan.Failed {
		t.Errorf("the daemon planned %v\na direct read planned %v", got, want)
	}
	one := runEngine(t, "plan", "--config", cfg, "--node", u(1))
	if one.code != 0 || !strings.Contains(one.stdout, "~ update") || strings.Contains(one.stdout, u(0)) {
		t.Errorf("plan --node through the daemon: exit %d\n%s%s", one.code, one.stdout, one.stderr)
	}
	if nosuch := runEngine(t, "plan", "--config", cfg, "--node", "nosuch"); nosuch.code != 1 || !strings.Contains(nosuch.stderr, `"nosuch"`) {
		t.Errorf("plan --node nosuch through the daemon: exit %d\n%s%s", nosuch.code, nosuch.stdout, nosuch.stderr)
	}

	for _, n := range []string{u(1), u(3)} {
		a := runEngine(t, "explain", n, "--config", cfg, "-o", "json")
		d := runEngine(t, "explain", n, "--config", direct, "-o", "json")
		if a.code != 0 || d.code != 0 || !strings.Contains(a.stderr, "engine running at") || strings.Contains(d.stderr, "engine running at") {
			t.Fatalf("explain %s: through the daemon exit %d %s; direct exit %d %s", n, a.code, a.stderr, d.code, d.stderr)
		}
		var xa, xd explained
		json.Unmarshal([]byte(a.stdout), &xa)
		json.Unmarshal([]byte(d.stdout), &xd)
		ja, _ := json.Marshal(xa)
		jd, _ := json.Marshal(xd)
		if string(ja) != string(jd) || xa.Node != n {
			t.Errorf("explain %s through the daemon:\n%s\ndirect:\n%s", n, ja, jd)
		}
	}
	if x := runEngine(t, "explain", u(3), "--config", cfg); !strings.Contains(x.stdout, "provision_state = cleaning") {
		t.Errorf("explain text through the daemon:\n%s", x.stdout)
	}
	if x := runEngine(t, "explain", "nosuch", "--config", cfg); x.code != 1 || !strings.Contains(x.stderr, "not listed by the plugin") {
		t.Errorf("explain nosuch through the daemon: exit %d\n%s", x.code, x.stderr)
	}
	// audit reads the state as plan does: beside the daemon, no lock.
	if a := runEngine(t, "audit", "--config", cfg); a.code != 3 || strings.Contains(a.stderr, "state file unusable") ||
		!strings.Contains(a.stdout, "traits") {
		t.Errorf("audit beside engine run: exit %d\n%s%s", a.code, a.stdout, a.stderr)
	}

	// None of it ran a cycle or wrote: the drift is still there.
	if r := apiReport(t, addr); r.Cycles != first.Cycles {
		t.Fatalf("plans and explanations ran cycles: %d, was %d", r.Cycles, first.Cycles)
	}
	placementGet(t, url, "/resource_providers/"+u(1)+"/traits", &tr)
	if slices.Contains(tr.Traits, "COMPUTE_NODE") {
		t.Fatalf("a plan repaired the drift: %v", tr.Traits)
	}

	// A cycle now over the API (the interval is an hour).
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/cycle", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /api/v1/cycle: %v %v", err, resp)
	}
	resp.Body.Close()
	waitCycles(t, addr, first.Cycles+1, logs)
	placementGet(t, url, "/resource_providers/"+u(1)+"/traits", &tr)
	if !slices.Contains(tr.Traits, "COMPUTE_NODE") {
		t.Errorf("the requested cycle did not repair the drift: %v", tr.Traits)
	}
	after, _ := runJSON(t, "plan", cfg)
	if g := byNode(after); !strings.HasPrefix(g[u(1)], "unchanged") {
		t.Errorf("plan after the cycle: %v", g)
	}
	if !strings.Contains(logs.String(), "cycle requested (SIGUSR1, the API") {
		t.Errorf("the daemon's log does not say the cycle was requested:\n%s", tail(logs.String(), 2000))
	}
}

// Under [coord] etcd, `engine plan` reads the fleet's shared ownership
// record from etcd, read-only: an engine whose host was lost (killed, its
// state file gone) had added CUSTOM_GPU; the nodes drop it; the plan from
// a fresh state removes it, as the daemon started again then does. The
// plan writes nothing to etcd and takes no lease.
func TestPlanUnderCoordReadsTheSharedRecord(t *testing.T) {
	r := newRecordRig(t, 6)
	r.allGPU(true)
	id := fmt.Sprintf("plancoord%x", os.Getpid())
	cfg := r.config(id, r.placement, true)
	cmd := r.run(cfg)
	if _, why := r.converge(30*time.Second, id); why != "" {
		t.Fatalf("did not converge: %s", why)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := os.Remove(filepath.Join(filepath.Dir(cfg), "state.json")); err != nil {
		t.Fatal(err)
	}
	r.allGPU(false)

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.etcd}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	etcdState := func() (int64, int) {
		g, err := cli.Get(ctx, "/")
		if err != nil {
			t.Fatal(err)
		}
		l, err := cli.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g.Header.Revision, len(l.Leases)
	}
	// The killed engine's lease runs out first (its keys go with it).
	rev, leases := etcdState()
	for deadline := time.Now().Add(30 * time.Second); leases > 0; rev, leases = etcdState() {
		if time.Now().After(deadline) {
			t.Fatalf("the killed engine's lease is still there")
		}
		time.Sleep(100 * time.Millisecond)
	}
	plan, res := runJSON(t, "plan", cfg)
	if res.code != 0 {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	removes := 0
	for _, o := range plan.Outcomes {
		for _, c := range o.Changes {
			if c.Field == "traits" && slices.Contains(c.Removed, "CUSTOM_GPU") {
				removes++
			}
		}
	}
	if removes != r.n {
		t.Errorf("the plan removes CUSTOM_GPU from %d providers, want %d: %v", removes, r.n, byNode(plan))
	}
	// explain shows the record the plan decided from: the state file is
	// gone, so only etcd's says CUSTOM_GPU was the engine's.
	res = runEngine(t, "explain", "--json", "--config", cfg, r.u(0))
	var x struct{ Record *engine.Record }
	if err := json.Unmarshal([]byte(res.stdout), &x); err != nil || res.code != 0 {
		t.Fatalf("explain: exit %d: %v\n%s", res.code, err, res.stderr)
	}
	if x.Record == nil || !slices.Contains(x.Record.Managed.Traits, "CUSTOM_GPU") {
		t.Errorf("explain's record under [coord] is not the shared one: %+v", x.Record)
	}
	// Nothing written since (a put shows as a key modified after rev), no
	// lease granted (a registration would hold one).
	changed, err := cli.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithMinModRev(rev+1), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, leases2 := etcdState(); len(changed.Kvs) > 0 || leases2 != leases {
		var keys []string
		for _, kv := range changed.Kvs {
			keys = append(keys, string(kv.Key))
		}
		t.Errorf("the plan wrote to etcd: keys %v, leases %d → %d", keys, leases, leases2)
	}
	if stray, _ := r.mismatch(id); stray != r.n {
		t.Fatalf("the plan wrote to Placement: %d stray left of %d", stray, r.n)
	}
	r.run(cfg)
	if stray, why := r.converge(30*time.Second, id); stray != 0 || why != "" {
		t.Errorf("the daemon after the plan: %d stray, %s", stray, why)
	}
}
