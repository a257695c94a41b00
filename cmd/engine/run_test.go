package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// daemonConfig is a config for `engine run` against the fake Placement.
func daemonConfig(t *testing.T, dir, endpoint, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`[engine]
id = "daemon"
interval = "20ms"
state_file = "state.json"
[provider]
marker_traits = ["COMPUTE_NODE"]
%s
[plugin]
path = %q
cache_dir = %q
[plugin.config]
nodes = 12
seed = 3
maintenance_fraction = 0.25
[server]
listen = "127.0.0.1:0"
[log]
level = "debug"
`, endpoint, plugintest.Build(t, "plugins/fake"), plugintest.CacheDir())
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(text+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// daemon is `engine run` in this process; ctx stands for SIGTERM.
type runningDaemon struct {
	t      *testing.T
	logs   *syncBuffer
	addr   string
	cancel context.CancelFunc
	code   chan int
}

func startDaemon(t *testing.T, cfg string, flags ...string) *runningDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &runningDaemon{t: t, logs: &syncBuffer{}, cancel: cancel, code: make(chan int, 1)}
	go func() {
		d.code <- run(ctx, append([]string{"run", "--config", cfg, "--log-format", "json"}, flags...), io.Discard, d.logs)
	}()
	t.Cleanup(func() { cancel(); <-d.code })
	addrRE := regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)
	d.waitFor("the status server", func() bool {
		m := addrRE.FindStringSubmatch(d.logs.String())
		if m != nil {
			d.addr = m[1]
		}
		return m != nil
	})
	return d
}

// stop sends "SIGTERM" and returns the exit status.
func (d *runningDaemon) stop() int {
	d.cancel()
	select {
	case c := <-d.code:
		d.code <- c
		return c
	case <-time.After(30 * time.Second):
		d.t.Fatalf("no exit 30s after the stop; logs:\n%s", d.logs)
		return -1
	}
}

func (d *runningDaemon) get(path string) (int, string) {
	resp, err := http.Get("http://" + d.addr + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (d *runningDaemon) metric(series string) float64 {
	_, body := d.get("/metrics")
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}

func (d *runningDaemon) waitFor(what string, ok func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			d.t.Fatalf("waited 60s for %s; logs:\n%s", what, d.logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hangup sends this process SIGHUP, as systemctl reload does.
func hangup(t *testing.T) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// records parses the JSON log lines.
func (d *runningDaemon) records() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(d.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func hasTrait(fake *placementfake.Server, trait string) bool {
	uuids := fake.ProviderUUIDs()
	for _, u := range uuids {
		if p, _ := fake.Provider(u); !slices.Contains(p.Traits, trait) {
			return false
		}
	}
	return len(uuids) > 0
}

// The daemon end to end, in process: ready after the first cycle, metrics
// and page served, SIGHUP reloads (a broken file is refused), SIGTERM
// stops with the state saved, and the logs carry what operators grep for.
func TestRunDaemon(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	dir := t.TempDir()
	placementTOML := fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL())
	cfg := daemonConfig(t, dir, placementTOML, "")
	d := startDaemon(t, cfg)

	d.waitFor("readiness", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	if code, body := d.get("/healthz"); code != 200 {
		t.Fatalf("healthz %d %s", code, body)
	}
	if n := len(fake.ProviderUUIDs()); n != 12 {
		t.Fatalf("%d providers after the first cycle", n)
	}
	var nodes float64
	for _, s := range []string{"schedulable", "maintenance", "provision_state", "instance", "power_state", "quarantined"} {
		nodes += d.metric(`rpengine_nodes{state="` + s + `"}`)
	}
	if nodes != 12 || d.metric(`rpengine_providers_changed_total{action="created"}`) != 12 {
		t.Fatalf("metrics: %v nodes, %v created", nodes, d.metric(`rpengine_providers_changed_total{action="created"}`))
	}
	if _, page := d.get("/"); !strings.Contains(page, "engine <code>daemon</code>") {
		t.Fatalf("status page:\n%s", page)
	}

	// SIGHUP with a new marker trait: it reaches every provider.
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `["COMPUTE_NODE"]`, `["COMPUTE_NODE", "CUSTOM_HUP"]`, 1)), 0o644)
	hangup(t)
	d.waitFor("the reloaded trait", func() bool { return hasTrait(fake, "CUSTOM_HUP") })

	// SIGHUP with a broken file: refused, the old config goes on.
	b, _ = os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `interval = "20ms"`, `interval = "soon"`, 1)), 0o644)
	hangup(t)
	d.waitFor("the failed reload", func() bool { return d.metric(`rpengine_config_reloads_total{result="failed"}`) == 1 })
	before := d.metric(`rpengine_cycles_total{outcome="ok"}`)
	d.waitFor("cycles after the failed reload", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= before+2 })
	if _, page := d.get("/"); !strings.Contains(page, "bad duration") {
		t.Fatal("the status page does not show why the reload failed")
	}

	if code := d.stop(); code != 0 {
		t.Fatalf("exit %d after SIGTERM; logs:\n%s", code, d.logs)
	}
	st, err := engine.LoadState(filepath.Join(dir, "state.json"), fake.URL()+" daemon")
	if err != nil || st == nil {
		t.Fatalf("state not saved: %v", err)
	}

	// The logs: writes with node and generations, Placement request ids
	// (log.level = "debug"), cycles, the refused reload.
	seen := map[string]bool{}
	for _, r := range d.records() {
		if r["engine"] != "daemon" {
			t.Errorf("a record without the engine id: %v", r)
		}
		switch r["msg"] {
		case "provider written":
			seen["write"] = seen["write"] || r["node"] != nil && r["generation_before"] != nil && r["generation_after"] != nil
		case "placement request":
			id, _ := r["request_id"].(string)
			seen["request id"] = seen["request id"] || strings.HasPrefix(id, "req-")
		case "cycle":
			seen["cycle"] = true
		case "reload failed: keeping the running configuration and plugin":
			seen["reload failed"] = strings.Contains(fmt.Sprint(r["err"]), "engine.interval")
		}
	}
	for _, k := range []string{"write", "request id", "cycle", "reload failed"} {
		if !seen[k] {
			t.Errorf("no %s in the logs", k)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The shipped examples parse: config.toml (the demo's) and
// deploy/engine.toml (production), with its files stood in for.
func TestExampleConfigsParse(t *testing.T) {
	root := plugintest.RepoRoot(t)
	if _, err := config.Load(filepath.Join(root, "config.toml")); err != nil && !strings.Contains(err.Error(), "plugin.path") {
		t.Fatalf("config.toml: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "engine.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := string(b)
	for _, f := range []string{"/etc/rpengine/clouds.yaml", "/usr/lib/rpengine/ironic.wasm"} {
		stand := filepath.Join(dir, filepath.Base(f))
		os.WriteFile(stand, []byte("x"), 0o644)
		text = strings.ReplaceAll(text, f, stand)
	}
	c, err := config.Parse(text, dir)
	if err != nil {
		t.Fatalf("deploy/engine.toml: %v", err)
	}
	if c.Auth.Method != "cloud" || c.Plugin.Services["baremetal"] != "catalog" || c.Server.Listen == "" {
		t.Fatalf("deploy/engine.toml read as %+v", c)
	}
}
