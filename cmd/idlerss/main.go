// Command idlerss runs `engine run` with the fake plugin against a fake
// Placement for many idle cycles and samples the resident memory of the
// engine and of its plugin host process, to show both stay flat after
// warm-up and within the plugin's memory limit + 64 MiB. It exits
// non-zero when they do not.
//
//	go run ./cmd/idlerss -engine bin/engine -plugin build/plugins/fake.wasm -cycles 1000
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

func main() {
	bin := flag.String("engine", "bin/engine", "engine binary")
	plugin := flag.String("plugin", "build/plugins/fake.wasm", "fake plugin")
	nodes := flag.Int("nodes", 2000, "fleet size")
	cycles := flag.Int("cycles", 1000, "idle cycles to run")
	interval := flag.Duration("interval", 20*time.Millisecond, "engine.interval")
	memory := flag.Int("memory-mib", 512, "plugin.memory_limit in MiB")
	warmup := flag.Int("warmup", 100, "cycles before memory must be flat")
	flat := flag.Int("flat-mib", 16, "largest growth allowed after warm-up, in MiB")
	flag.Parse()
	if err := run(*bin, *plugin, *nodes, *cycles, *warmup, *interval, *memory, *flat); err != nil {
		fmt.Fprintln(os.Stderr, "idlerss:", err)
		os.Exit(1)
	}
}

func run(bin, plugin string, nodes, cycles, warmup int, interval time.Duration, memory, flat int) error {
	fake := placementfake.New(placementfake.WithSeed(1))
	defer fake.Close()
	dir, err := os.MkdirTemp("", "idlerss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plugin, _ = filepath.Abs(plugin)
	cfg, err := writeConfig(dir, interval, fake.URL(), plugin, memory, nodes)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Stderr, err = os.Create(filepath.Join(dir, "engine.log"))
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	fmt.Printf("engine run: %d nodes, interval %s, memory_limit %d MiB, %d cycles\n\n", nodes, interval, memory, cycles)
	fmt.Println("| cycle | engine RSS MiB | plugin host RSS MiB |")
	fmt.Println("|---:|---:|---:|")
	var base [2]int
	var peak [2]int
	next := 0
	start := time.Now()
	n := 0
	for {
		n += listings(fake)
		if n >= next {
			e, c := rss(cmd.Process.Pid)
			fmt.Printf("| %d | %d | %d |\n", n, e>>20, c>>20)
			next += max(cycles/10, 1)
		}
		e, c := rss(cmd.Process.Pid)
		if n >= warmup && base[0] == 0 {
			base = [2]int{e, c}
		}
		if n >= warmup {
			peak = [2]int{max(peak[0], e), max(peak[1], c)}
		}
		if n >= cycles {
			break
		}
		if time.Since(start) > time.Duration(cycles)*(interval+time.Second) {
			return fmt.Errorf("only %d cycles ran", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return judge(base, peak, memory, flat, warmup)
}

// writeConfig writes the engine's config for the run into dir.
func writeConfig(dir string, interval time.Duration, url, plugin string, memory, nodes int) (string, error) {
	cfg := filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(`[engine]
id = "idle"
interval = %q
[auth]
method = "noauth"
[placement]
endpoint = %q
token = "admin"
[plugin]
path = %q
memory_limit = "%dMiB"
[plugin.config]
nodes = %d
seed = 1
`, interval, url, plugin, memory, nodes)
	return cfg, os.WriteFile(cfg, []byte(body), 0o644)
}

// judge prints the RSS after warm-up and fails when a peak is over the
// bound or grew by more than flat MiB.
func judge(base, peak [2]int, memory, flat, warmup int) error {
	limit := (memory + 64) << 20
	fmt.Printf("\nafter warm-up (cycle %d): engine %d -> peak %d MiB, plugin host %d -> peak %d MiB; bound %d MiB each\n",
		warmup, base[0]>>20, peak[0]>>20, base[1]>>20, peak[1]>>20, limit>>20)
	for i, who := range []string{"engine", "plugin host"} {
		if peak[i] > limit {
			return fmt.Errorf("%s RSS %d MiB exceeds memory_limit + 64 MiB", who, peak[i]>>20)
		}
		if peak[i]-base[i] > flat<<20 {
			return fmt.Errorf("%s RSS grew %d MiB after warm-up (allowed %d)", who, (peak[i]-base[i])>>20, flat)
		}
	}
	return nil
}

// listings counts the cycles since the last call: an idle cycle lists
// this engine's providers once.
func listings(fake *placementfake.Server) int {
	defer fake.ResetRequests()
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == "GET" && r.Path == "/resource_providers" {
			n++
		}
	}
	return n
}

// rss returns the resident bytes of pid and of its children together.
func rss(pid int) (self, children int) {
	self = vmRSS(pid)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid)) // any thread may have started it
	for _, t := range tasks {
		raw, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(raw)) {
			if c, err := strconv.Atoi(f); err == nil {
				children += vmRSS(c)
			}
		}
	}
	return self, children
}

func vmRSS(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb << 10
		}
	}
	return 0
}
