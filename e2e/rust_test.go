package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/conformance"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// rustPlugin returns the Rust example plugin: RPENGINE_PLUGIN_DIR's
// rust-example.wasm (make builds it) or a fresh build. Without a Rust
// toolchain the test skips, or fails under RPENGINE_REQUIRE_E2E=1 (CI).
func rustPlugin(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("RPENGINE_PLUGIN_DIR"); dir != "" {
		if p := filepath.Join(dir, "rust-example.wasm"); fileExists(p) {
			return p
		}
	}
	out := filepath.Join(t.TempDir(), "rust-example.wasm")
	cmd := exec.Command("scripts/rust/build.sh", out)
	cmd.Dir = plugintest.RepoRoot(t)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build the Rust plugin: %v\n%s", err, msg)
	}
	if !fileExists(out) {
		if os.Getenv("RPENGINE_REQUIRE_E2E") == "1" {
			t.Fatalf("RPENGINE_REQUIRE_E2E=1 but the Rust plugin was not built: %s", msg)
		}
		t.Skipf("%s", msg)
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// The plugin written in Rust, without the Go SDK, passes the conformance
// suite of `engine plugin test` (confirm_deleted skipped: it has none).
func TestRustPluginConformanceE2E(t *testing.T) {
	wasm := rustPlugin(t)
	res := runEngine(t, "plugin", "test", "--config",
		writeConfig(t, "rust-kit", "http://127.0.0.1:1", wasm, "[plugin.config]\nnodes = 30\nresource_class = \"rust-gold\"\n"), wasm)
	if res.code != 0 {
		t.Fatalf("engine plugin test: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"PASS  abi", "PASS  describe", "PASS  config_errors", "PASS  list_nodes",
		"30 nodes, complete", "PASS  listings_agree", "SKIP  confirm_deleted", "PASS  memory", "PASS  services"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	// The same suite in-process, to count: nothing fails.
	ok := conformance.Run(context.Background(), conformance.Options{Path: wasm, Config: []byte(`{"nodes": 3}`),
		Host: wasmhost.Options{CacheDir: plugintest.CacheDir()}}, func(r conformance.Result) {
		if r.Status == conformance.Fail {
			t.Errorf("%s: %s", r.Check, r.Detail)
		}
	})
	if !ok {
		t.Fatal("the Rust plugin fails the suite")
	}
}

// One cycle of the engine with the Rust plugin against the real
// Placement writes every node: class, traits, reserved 0; a second cycle
// writes nothing.
func TestRustPluginCycleAgainstRealPlacementE2E(t *testing.T) {
	wasm := rustPlugin(t)
	url := placementtest.Shared(t)
	fleet := os.Getpid() & 0x7fffffff
	id := fmt.Sprintf("e2e-rust-%x", fleet)
	cfg := writeConfig(t, id, url, wasm, fmt.Sprintf(
		"[plugin.config]\nfleet = %d\nnodes = 5\nresource_class = \"rust-gold\"\ntraits = [\"CUSTOM_RUST\"]\n", fleet))
	r := once(t, cfg)
	if r.Nodes != 5 || r.Created != 5 {
		t.Fatalf("first cycle: %+v", r)
	}
	owner := "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_"))
	want := inventory{Total: 1, Reserved: 0, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	for i := range 5 {
		uuid := fmt.Sprintf("%08x-0000-4000-8000-%012x", fleet, i)
		p, ok := readProvider(t, url, uuid)
		if !ok {
			t.Fatalf("provider %s missing from Placement", uuid)
		}
		if p.Inventories["CUSTOM_RUST_GOLD"] != want || len(p.Inventories) != 1 {
			t.Errorf("node %s: inventories %+v, want CUSTOM_RUST_GOLD=%+v", uuid, p.Inventories, want)
		}
		for _, tr := range []string{"CUSTOM_RUST", owner, "COMPUTE_NODE"} {
			if !slices.Contains(p.Traits, tr) {
				t.Errorf("node %s: traits %v lack %s", uuid, p.Traits, tr)
			}
		}
	}
	if r := once(t, cfg); r.Unchanged != 5 || r.Created+r.Updated != 0 || r.PlacementRequests != 1 {
		t.Fatalf("second cycle wrote: %+v", r)
	}
}
