package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// pluginTestConfig writes an engine config whose [plugin] table is
// pluginTOML (the plugin path is a placeholder the verb replaces).
func pluginTestConfig(t *testing.T, wasm, pluginTOML string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	text := fmt.Sprintf("[placement]\nendpoint = \"http://127.0.0.1:1\"\n[plugin]\npath = %q\ncache_dir = %q\n%s",
		wasm, plugintest.CacheDir(), pluginTOML)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runPluginTest runs `engine plugin test` and returns the exit code and
// the status of each check by name.
func runPluginTest(t *testing.T, args ...string) (int, map[string]string, string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "rpengine-test-xdg-cache"))
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"plugin", "test"}, args...), &out, &errb)
	status := map[string]string{}
	for line := range strings.Lines(out.String()) {
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "PASS" || f[0] == "FAIL" || f[0] == "SKIP") {
			status[f[1]] = f[0]
		}
	}
	return code, status, out.String() + errb.String()
}

var allChecks = []string{"abi", "describe", "configure", "config_errors", "list_nodes", "list_instances",
	"listings_agree", "encodings_agree", "confirm_deleted", "answer_time", "memory", "services"}

// The fake plugin, configured with a fleet, passes every check.
func TestPluginTestPassesTheFake(t *testing.T) {
	wasm := plugintest.Build(t, "plugins/fake")
	cfg := pluginTestConfig(t, wasm, "memory_limit = \"128MiB\"\n[plugin.config]\nnodes = 40\nseed = 7\ninstance_fraction = 0.3\nmaintenance_fraction = 0.2\n")
	code, status, out := runPluginTest(t, wasm, "--config", cfg) // flags after the file, as in the README
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, c := range allChecks {
		if status[c] != "PASS" {
			t.Errorf("check %s: %q, want PASS\n%s", c, status[c], out)
		}
	}
	if !strings.Contains(out, "40 nodes, complete") {
		t.Errorf("the listing check did not see the fleet:\n%s", out)
	}
}

// Broken plugins fail, each on the check that names its fault, and the
// verb exits 1.
func TestPluginTestFailsBrokenPlugins(t *testing.T) {
	hostile := plugintest.Build(t, "plugins/hostile")
	cases := []struct {
		name   string
		wasm   string
		plugin string // [plugin] table
		fail   []string
		skip   []string
	}{
		// The hostile plugin declares no services (unchecked, so services
		// is skipped); here it also spins in list_instances past a short
		// timeout.
		{"hostile spin", hostile, "timeout = \"2s\"\n[plugin.config]\nattack = \"spin\"\nin = \"list_instances\"\n",
			[]string{"list_instances", "listings_agree"}, []string{"services"}},
		{"hostile ungranted service", hostile, "[plugin.config]\nattack = \"service\"\nservice = \"baremetal\"\n",
			[]string{"list_nodes"}, []string{"memory", "services"}},
		// Binary records answered though only JSON was offered: the host
		// refuses them (ABI §4), so the kit must fail the plugin.
		{"raw rpb1 to a JSON-only host", guesttest.Build(t, "../../plugins/hostile/raw"), "[plugin.config]\nrepeat = { head = " + tomlString(rpb1Answer()) + ", count = 0 }\n",
			[]string{"encodings_agree"}, nil},
		{"raw bad signature", guesttest.Build(t, "../../plugins/hostile/raw", "badsig"), "",
			[]string{"abi"}, []string{"configure", "list_nodes", "services"}},
		{"raw incomplete", guesttest.Build(t, "../../plugins/hostile/raw"), "[plugin.config]\nx = \"incomplete\"\n",
			[]string{"list_nodes"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, status, out := runPluginTest(t, "--config", pluginTestConfig(t, c.wasm, c.plugin), c.wasm)
			if code != 1 || !strings.Contains(out, "checks failed") {
				t.Errorf("exit %d, want 1 and a FAIL summary:\n%s", code, out)
			}
			for _, n := range c.fail {
				if status[n] != "FAIL" {
					t.Errorf("check %s: %q, want FAIL\n%s", n, status[n], out)
				}
			}
			for _, n := range c.skip {
				if status[n] != "SKIP" {
					t.Errorf("check %s: %q, want SKIP\n%s", n, status[n], out)
				}
			}
		})
	}
}
