package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/novatest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestNovaSideBySide measures nova 26.2.2's own reporting path
// (ComputeManager.update_available_resource with the Ironic driver,
// internal/testing/novatest) and the engine (`engine once`, Ironic plugin in Wasm,
// state file) over the same real Ironic, each with a fresh real Placement,
// both behind one counting proxy. It is a bench, not a test: `make bench`
// runs it with RPBENCH_NOVA=1 and RPBENCH_NOVA_OUT=<markdown file>. At
// the first size it also replays bug 1841481's window both ways
// (replay1841481; RPBENCH_NOVA_REPLAY_ROUNDS rounds, default 1, 0 skips
// it) and appends its table to the same file. It fails only when a side
// errs, leaves Placement without a provider after its first cycle, or the
// engine deletes a provider in the replay (there nova's deletions are
// what is measured).
func TestNovaSideBySide(t *testing.T) {
	if os.Getenv("RPBENCH_NOVA") != "1" {
		t.Skip("RPBENCH_NOVA unset: `make bench` runs it")
	}
	sizes := envInts(t, "RPBENCH_NOVA_SIZES", "50,200")
	rounds := envInts(t, "RPBENCH_NOVA_ROUNDS", "3")[0]
	ironicURL := ironictest.StartReal(t)
	ic := ironictest.NewClient(t, ironicURL)
	plugin := plugintest.Build(t, "plugins/ironic")
	bin := engineBinary(t)
	// Warm the compile cache first: the engine's first cycle would
	// otherwise include compiling the plugin, which a package does once
	// at install (`engine plugin compile`), not at each start.
	if out, err := exec.Command(bin, "plugin", "compile", "--cache-dir", plugintest.CacheDir(), plugin).CombinedOutput(); err != nil {
		t.Fatalf("warm the compile cache: %v: %s", err, out)
	}
	replayRounds := envInts(t, "RPBENCH_NOVA_REPLAY_ROUNDS", "1")[0]
	var nodes []string
	var rows []novaRow
	var replayed []replayRow
	for i, n := range sizes {
		start := time.Now()
		nodes = enrollNodes(t, ironicURL, nodes, n)
		t.Logf("%d nodes enrolled in %s", n, time.Since(start).Round(time.Second))
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			start := time.Now()
			r := newNovaRig(t, bin, plugin, ironicURL)
			rows = append(rows, sideBySide(t, r, ic, nodes, rounds)...)
			t.Logf("side by side at %d nodes: %s", n, time.Since(start).Round(time.Second))
			if i == 0 && replayRounds > 0 { // the window does not depend on the fleet's size
				start := time.Now()
				replayed = replay1841481(t, r, ic, nodes, replayRounds, i < len(sizes)-1)
				t.Logf("bug 1841481 replay at %d nodes: %s", n, time.Since(start).Round(time.Second))
			}
		})
		// after each size, so a long run stopped early keeps what it measured
		md := novaMarkdown(rows)
		if len(replayed) > 0 {
			md += "\n" + replayMarkdown(replayed)
		}
		t.Log("\n" + md)
		if out := os.Getenv("RPBENCH_NOVA_OUT"); out != "" {
			if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// novaRow is one step at one fleet size: per side, requests and client
// CPU and wall of each round.
type novaRow struct {
	n                     int
	step                  string
	novaReq, engReq       []float64
	novaCPU, engCPU       []float64 // seconds
	novaWall, engWall     []float64
	novaWrites, engWrites []float64
}

// novaRig is one size's pair: nova and the engine, each with its own
// fresh Placement behind one counting proxy.
type novaRig struct {
	c                   *Counter
	novaRaw, engRaw     string // the Placements themselves, for uncounted reads and writes
	novaURL, engURL     string // the same behind the counter
	nova                *novatest.Nova
	cfg                 string // the engine's config (its state file beside it)
	bin, plugin, ironic string
}

func newNovaRig(t *testing.T, bin, plugin, ironicURL string) *novaRig {
	r := &novaRig{c: NewCounter(), bin: bin, plugin: plugin, ironic: ironicURL}
	t.Cleanup(r.c.Close)
	r.novaRaw, r.engRaw = placementtest.StartReal(t), placementtest.StartReal(t)
	var err error
	if r.novaURL, err = r.c.Side("nova", r.novaRaw); err != nil {
		t.Fatal(err)
	}
	if r.engURL, err = r.c.Side("engine", r.engRaw); err != nil {
		t.Fatal(err)
	}
	r.cfg = engineConfig(t, t.TempDir(), "config.toml", r.engURL, plugin, ironicURL, "")
	r.nova = novatest.Start(t, filepath.Join(t.TempDir(), "nova"), ironicURL, r.novaURL, novatest.Options{})
	r.c.Take("nova") // start-up reads (GET /) are not a cycle
	return r
}

func sideBySide(t *testing.T, rig *novaRig, ic *ironictest.Client, nodes []string, rounds int) []novaRow {
	c, nova, bin, cfg := rig.c, rig.nova, rig.bin, rig.cfg
	novaURL, engURL := rig.novaURL, rig.engURL
	n := len(nodes)
	var rows []novaRow
	step := func(name string, startup bool, times int, before func()) {
		r := novaRow{n: n, step: name}
		for range times {
			if before != nil {
				before()
			}
			wall, cpu := nova.PeriodicCost(t, startup)
			nc := c.Take("nova")
			ew, ecpu := engineOnce(t, bin, cfg)
			ec := c.Take("engine")
			r.novaReq, r.engReq = append(r.novaReq, float64(nc.Total)), append(r.engReq, float64(ec.Total))
			r.novaWrites, r.engWrites = append(r.novaWrites, float64(nc.Writes)), append(r.engWrites, float64(ec.Writes))
			r.novaCPU, r.engCPU = append(r.novaCPU, cpu.Seconds()), append(r.engCPU, ecpu.Seconds())
			r.novaWall, r.engWall = append(r.novaWall, wall.Seconds()), append(r.engWall, ew.Seconds())
		}
		rows = append(rows, r)
	}
	step("first cycle, no providers", true, 1, nil)
	if errs := nova.Errors(); len(errs) > 0 {
		t.Fatalf("nova logged errors: %s", errs[0])
	}
	for _, url := range []string{novaURL, engURL} {
		if got := countProviders(t, url); got != n {
			t.Fatalf("%s: %d providers for %d nodes", url, got, n)
		}
	}
	step("idle cycle", false, rounds, nil)
	step("idle cycle, association refresh due (every 300 s)", false, 1, func() { nova.RefreshDue(t) })
	flip := true
	step("one node into or out of maintenance", false, 2, func() { ic.Maintenance(t, nodes[0], flip); flip = !flip })
	return rows
}

// engineOnce runs one `engine once` process: its wall and CPU (user +
// system of the whole process: start-up, plugin load from the warm
// compile cache, listing, cycle).
func engineOnce(t *testing.T, bin, cfg string) (time.Duration, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, "once", "--config", cfg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("engine once: %v\n%s", err, tail(out.Bytes()))
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// engineConfig writes the engine's config as name in dir; computeURL, when
// set, grants the Compute API and lists instances on nova's host.
func engineConfig(t *testing.T, dir, name, placementURL, plugin, ironicURL, computeURL string) string {
	text := fmt.Sprintf(`[engine]
id = "bench-nova"
state_file = "state.json"

[provider]
marker_traits = ["COMPUTE_NODE"]

[placement]
endpoint = %q
token = "admin"

[plugin]
path = %q
timeout = "120s"
cache_dir = %q

[plugin.services]
baremetal = %q
`, placementURL, plugin, plugintest.CacheDir(), ironicURL)
	if computeURL != "" {
		text += fmt.Sprintf("compute = %q\n\n[plugin.config]\ncompute_host = %q\n", computeURL, novaHost)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func engineBinary(t *testing.T) string {
	if p := os.Getenv("RPENGINE_ENGINE_BIN"); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), "engine")
	cmd := exec.Command("go", "build", "-o", p, "./cmd/engine")
	cmd.Dir = plugintest.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build engine: %v\n%s", err, out)
	}
	return p
}

func countProviders(t *testing.T, url string) int {
	t.Helper()
	b, err := do(t.Context(), http.DefaultClient, "GET", url+"/resource_providers", nil)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), `"uuid"`)
}

func envInts(t *testing.T, name, def string) []int {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []int
	for _, s := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, i)
	}
	return out
}

func novaMarkdown(rows []novaRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| nodes | step (rounds) | nova Placement requests | engine requests | nova / engine | nova CPU s | engine CPU s | nova / engine | nova wall s | engine wall s |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		nr, er := SpreadOf(r.novaReq), SpreadOf(r.engReq)
		nc, ec := SpreadOf(r.novaCPU), SpreadOf(r.engCPU)
		fmt.Fprintf(&b, "| %d | %s (%d) | %s (%s writes) | %s (%s writes) | %s | %s | %s | %s | %s | %s |\n",
			r.n, r.step, len(r.novaReq), nr.Format("%.0f"), SpreadOf(r.novaWrites).Format("%.0f"),
			er.Format("%.0f"), SpreadOf(r.engWrites).Format("%.0f"), Ratio(nr, er),
			nc.Format("%.2f"), ec.Format("%.2f"), Ratio(nc, ec),
			SpreadOf(r.novaWall).Format("%.2f"), SpreadOf(r.engWall).Format("%.2f"))
	}
	return b.String()
}
