package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// Timing of the scale-out tests. A dead engine's nodes must be managed
// again within two intervals: its lease expires within ttl plus etcd's
// half-second expiry tick, each peer starts a cycle within 1.1 intervals,
// so 1 s + 0.5 s + 5.5 s leaves 3 s of the 10 s for the takeover cycle.
// Shorter intervals would leave too little: etcd leases count whole
// seconds.
const (
	soInterval   = 5 * time.Second
	soTTL        = time.Second
	soNodes      = 60
	soPartitions = 30 // each of three engines holds some: (2/3)^30 < 1e-5
)

// scaleRig is one fleet of fake nodes, one etcd, the shared Placement and
// the engines dividing the fleet.
type scaleRig struct {
	t         *testing.T
	placement string
	etcd      string
	plugin    string
	seed      int
	log       *requestLog
	engines   map[string]*engineProc
	desired   map[string]map[string]inventory // uuid → inventories
	observer  string                          // a config that reaches etcd directly, for status
	kube      *kubeFleet                      // set: coordinate through Kubernetes, etcd is its host:port
	access    string                          // more [coord] keys: etcd's TLS and user
	ttl       time.Duration                   // lease_ttl; zero: soTTL
	interval  time.Duration                   // engine.interval; zero: soInterval
	metrics   map[string]string               // set: each engine serves /metrics, its URL here by id
}

type engineProc struct {
	id, cfg, logPath string
	etcd             *etcdtest.Proxy // between this engine and etcd
	cmd              *exec.Cmd
	exited           chan struct{}
	logged           bool
}

func newScaleRig(t *testing.T, seed int) *scaleRig {
	t.Helper()
	r := &scaleRig{t: t, placement: placementtest.Shared(t), etcd: etcdtest.Start(t),
		plugin: plugintest.Build(t, "plugins/fake"), seed: seed, log: &requestLog{}, engines: map[string]*engineProc{}}
	r.desired = r.oracle()
	r.observer = r.config(r.id(0), r.placement, r.etcd, true)
	return r
}

// id names engine n of this test uniquely on the shared Placement.
func (r *scaleRig) id(n int) string { return fmt.Sprintf("so%x-%d-e%d", os.Getpid(), r.seed, n) }

func (r *scaleRig) config(id, placementURL, etcdURL string, withCoord bool) string {
	dir := r.t.TempDir()
	text := fmt.Sprintf(`[engine]
id = %q
interval = %q
state_file = "state.json"

[provider]
marker_traits = ["COMPUTE_NODE"]

[placement]
endpoint = %q
token = "admin"

[plugin]
path = %q
cache_dir = %q
`, id, cmp.Or(r.interval, soInterval), placementURL, r.plugin, plugintest.CacheDir())
	if r.metrics != nil {
		port, err := testenv.FreePort()
		if err != nil {
			r.t.Fatal(err)
		}
		text += fmt.Sprintf("\n[server]\nlisten = \"127.0.0.1:%d\"\n", port)
		r.metrics[id] = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	}
	switch {
	case withCoord && r.kube != nil:
		text += r.kube.section(r.t, etcdURL, soPartitions, cmp.Or(r.ttl, soTTL), "/rpengine/")
	case withCoord:
		text += fmt.Sprintf("\n[coord]\netcd = [%q]\npartitions = %d\nlease_ttl = %q\n%s", etcdURL, soPartitions, cmp.Or(r.ttl, soTTL), r.access)
	}
	text += fmt.Sprintf("\n[plugin.config]\nnodes = %d\nseed = %d\nmaintenance_fraction = 0.25\n", soNodes, r.seed)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// oracle is the desired state as one engine alone would write it: the
// inventories of `engine plan` for an engine that owns nothing yet.
func (r *scaleRig) oracle() map[string]map[string]inventory {
	res := runEngine(r.t, "plan", "--json", "--config", r.config(r.id(0), r.placement, "", false))
	var rep struct {
		Writes []struct {
			Op          string                         `json:"op"`
			UUID        string                         `json:"uuid"`
			Inventories map[string]placement.Inventory `json:"inventories"`
		} `json:"writes"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		r.t.Fatalf("plan: exit %d: %v\n%s", res.code, err, res.stderr)
	}
	out := map[string]map[string]inventory{}
	for _, w := range rep.Writes {
		if w.Op != "set_inventories" {
			continue
		}
		out[w.UUID] = map[string]inventory{}
		for rc, i := range w.Inventories {
			out[w.UUID][rc] = inventory{i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio}
		}
	}
	if len(out) != soNodes {
		r.t.Fatalf("plan wants %d providers, the fleet has %d nodes", len(out), soNodes)
	}
	return out
}

// start runs `engine run` as engine n; its Placement traffic is logged,
// and its etcd traffic passes a proxy the test can sever.
func (r *scaleRig) start(n int) *engineProc {
	r.t.Helper()
	id := r.id(n)
	p := r.engines[id]
	if p == nil {
		p = &engineProc{id: id, etcd: etcdtest.NewProxy(r.t, r.etcd)}
		p.cfg = r.config(id, r.log.proxy(r.t, r.placement, id), p.etcd.URL(), true)
		p.logPath = filepath.Join(filepath.Dir(p.cfg), "engine.log")
		r.engines[id] = p
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer logFile.Close()
	p.cmd = exec.Command(engineBin(r.t), "run", "--config", p.cfg)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.exited)
	// Registered after the proxies, so it runs before they close: a
	// stopping engine still reaches etcd to leave cleanly.
	r.t.Cleanup(func() { r.stop(p) })
	return p
}

// kill ends engine n with SIGKILL: no clean release, its lease must expire.
func (r *scaleRig) kill(n int) {
	p := r.engines[r.id(n)]
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// stop ends an engine with SIGTERM; its log goes to the test's output if
// the test failed or RPENGINE_E2E_LOGS=1.
func (r *scaleRig) stop(p *engineProc) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if (r.t.Failed() || os.Getenv("RPENGINE_E2E_LOGS") == "1") && !p.logged {
		p.logged = true
		b, _ := os.ReadFile(p.logPath)
		if os.Getenv("RPENGINE_E2E_LOGS") == "1" {
			r.t.Logf("engine %s log:\n%s", p.id, b)
		} else {
			r.t.Logf("engine %s log (tail):\n%s", p.id, tailString(string(b), 6000))
		}
	}
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// status is `engine status --json`.
func (r *scaleRig) status() coord.Status {
	r.t.Helper()
	res := runEngine(r.t, "status", "--json", "--config", r.observer)
	var st coord.Status
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		r.t.Fatalf("status: exit %d: %v\n%s", res.code, err, res.stderr)
	}
	return st
}

// owners maps each provider carrying COMPUTE_NODE and an engine's marker
// to the engines whose marker it carries, as Placement lists them.
func (r *scaleRig) owners(ids ...string) map[string][]string {
	out := map[string][]string{}
	for _, id := range ids {
		var list struct {
			ResourceProviders []struct{ UUID string } `json:"resource_providers"`
		}
		placementGet(r.t, r.placement, "/resource_providers?required=COMPUTE_NODE,"+engine.OwnerTrait(id), &list)
		for _, p := range list.ResourceProviders {
			out[p.UUID] = append(out[p.UUID], id)
		}
	}
	return out
}

// managedBy reports whether every node's provider carries the marker of
// exactly one engine, the one holding its partition per claims (unit →
// engine), and explains the first mismatch.
func (r *scaleRig) managedBy(claims map[string]string, ids ...string) (bool, string) {
	owners := r.owners(ids...)
	for uuid := range r.desired {
		unit := coord.PartitionUnit(soPartitions, engine.Partition(uuid, soPartitions))
		if got := owners[uuid]; len(got) != 1 || got[0] != claims[unit] {
			return false, fmt.Sprintf("provider %s (%s) marked by %v, held by %q", uuid, unit, got, claims[unit])
		}
	}
	return true, ""
}

// waitSettled waits until the engines ids are the members, each holds
// what rendezvous assigns it, and Placement's markers follow the claims.
func (r *scaleRig) waitSettled(within time.Duration, ids ...string) {
	r.t.Helper()
	why := ""
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		st := r.status()
		if len(st.Members) != len(ids) || len(st.Pending) > 0 {
			why = fmt.Sprintf("%d members, %d moves pending", len(st.Members), len(st.Pending))
			continue
		}
		var ok bool
		if ok, why = r.managedBy(st.Claims, ids...); ok {
			return
		}
	}
	r.t.Fatalf("not settled within %s: %s", within, why)
}

// waitQuiet waits until no engine has written for one interval, so that
// any later write by another engine is a hand-over, not a race.
func (r *scaleRig) waitQuiet() {
	r.t.Helper()
	for deadline := time.Now().Add(6 * soInterval); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if time.Since(r.log.lastWrite()) > soInterval {
			return
		}
	}
	r.t.Fatal("engines kept writing a steady fleet")
}

// checkDesired compares every provider with the oracle through
// Placement's API: inventories exactly, COMPUTE_NODE and one owner marker.
func (r *scaleRig) checkDesired(ids ...string) {
	r.t.Helper()
	markers := map[string]bool{}
	for _, id := range ids {
		markers[engine.OwnerTrait(id)] = true
	}
	for uuid, want := range r.desired {
		p, ok := readProvider(r.t, r.placement, uuid)
		if !ok {
			r.t.Errorf("provider %s missing", uuid)
			continue
		}
		owners := 0
		for _, tr := range p.Traits {
			if strings.HasPrefix(tr, engine.OwnerTraitPrefix) {
				owners++
				if !markers[tr] {
					r.t.Errorf("provider %s marked by %s, not one of the engines", uuid, tr)
				}
			}
		}
		if owners != 1 || !containsString(p.Traits, "COMPUTE_NODE") {
			r.t.Errorf("provider %s traits %v", uuid, p.Traits)
		}
		if fmt.Sprint(p.Inventories) != fmt.Sprint(want) {
			r.t.Errorf("provider %s inventories %v, want %v", uuid, p.Inventories, want)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
