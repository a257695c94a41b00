package soak

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestSoak is the short seeded soak `make test` runs: 300 cycles at 200
// nodes (100 with -short), any violation fails it. RPENGINE_SOAK_SEED
// replays another history.
func TestSoak(t *testing.T) {
	cfg := Config{Seed: 1, Cycles: 300, Nodes: 200, Dir: t.TempDir()}
	if testing.Short() {
		cfg.Cycles = 100
	}
	if s := os.Getenv("RPENGINE_SOAK_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RPENGINE_SOAK_SEED: %v", err)
		}
		cfg.Seed = seed
	}
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if rep.ViolationCount > 0 {
		t.Fatalf("seed %d: %d violations in %d cycles\n%s", cfg.Seed, rep.ViolationCount, rep.Cycles, md.String())
	}
	t.Logf("seed %d: %d cycles, %d invariant checks, 0 violations, %v", cfg.Seed, rep.Cycles, sum(rep.Checks), rep.Duration)
	if testing.Short() {
		return
	}
	// A soak that injected nothing proves nothing: each kind must strike.
	for _, kind := range []string{"placement_conflict_storm", "placement_status_5xx", "placement_dropped_connection",
		"source_list_nodes_error", "source_partial_listing_claimed_complete"} {
		if rep.Faults[kind] == 0 {
			t.Errorf("no %s injected", kind)
		}
	}
	for _, ev := range []string{"instance_lands_during_node_listing", "node_deleted", "class_change_occupied", "foreign_trait"} {
		if rep.Events[ev] == 0 {
			t.Errorf("no %s event", ev)
		}
	}
	if sum(rep.Restarts) == 0 || rep.QuietCycles == 0 {
		t.Errorf("restarts %v, quiet cycles %d: the history is too tame", rep.Restarts, rep.QuietCycles)
	}
}

// TestSoakWasm drives a shorter history through the real fake plugin in
// Wasm, reading the world over HTTP, with traps from faulty instances.
func TestSoakWasm(t *testing.T) {
	cfg := Config{Seed: 7, Cycles: 80, Nodes: 100, Mode: ModeWasm, Dir: t.TempDir(),
		Plugin: plugintest.Build(t, "plugins/fake"), CacheDir: plugintest.CacheDir()}
	if testing.Short() {
		cfg.Cycles = 30
	}
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ViolationCount > 0 {
		var md bytes.Buffer
		rep.Markdown(&md)
		t.Fatalf("seed %d: %d violations\n%s", cfg.Seed, rep.ViolationCount, md.String())
	}
	t.Logf("seed %d: %d cycles, %d invariant checks, 0 violations, %v", cfg.Seed, rep.Cycles, sum(rep.Checks), rep.Duration)
	traps := 0
	for k, n := range rep.Faults {
		if strings.HasPrefix(k, "plugin_trap_") {
			traps += n
		}
	}
	if traps == 0 && !testing.Short() {
		t.Errorf("no plugin trap injected: faults %v", rep.Faults)
	}
}
