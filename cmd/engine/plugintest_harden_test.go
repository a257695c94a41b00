package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// rpb1Answer is a list_nodes answer in binary records: one node.
func rpb1Answer() string {
	b, _ := hostabi.AppendNodeRecords(nil, []hostabi.Node{{UUID: "5d7e0f5c-0000-4000-8000-000000000001", Name: "decoy", ResourceClass: "baremetal"}})
	return string(b)
}

// tomlString quotes ASCII s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			fmt.Fprintf(&b, `\u%04x`, c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The kit needs no Placement: a config without placement.endpoint runs.
// Its memory check passes a plugin that runs out of memory at the small
// limits of the bisection without printing the guest runtime's trace. A
// plugin that declares no services passes describe, and services is
// skipped as unchecked.
func TestPluginTestNeedsNoPlacementAndStaysQuiet(t *testing.T) {
	hostile := plugintest.Build(t, "plugins/hostile")
	cfg := pluginTestConfig(t, hostile, "memory_limit = \"128MiB\"\n[plugin.config]\nattack = \"near_limit\"\nlive_mib = 24\nchurn_mib = 8\n")
	text := readFile(t, cfg)
	writeFile(t, cfg, strings.Replace(text, "[placement]\nendpoint = \"http://127.0.0.1:1\"\n", "", 1))
	code, status, out := runPluginTest(t, hostile, "--config", cfg)
	// The hostile plugin answers every uuid present: confirm_deleted is the
	// one check it fails.
	for c, st := range status {
		if st == "FAIL" && c != "confirm_deleted" && slices.Contains(allChecks, c) {
			t.Errorf("check %s failed:\n%s", c, out)
		}
	}
	if code != 1 || status["configure"] != "PASS" {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if status["memory"] != "PASS" || !strings.Contains(out, "lines the plugin wrote while short of memory not shown") {
		t.Errorf("memory: %q; want PASS with the quieted lines counted:\n%s", status["memory"], out)
	}
	for _, trace := range []string{"goroutine ", "runtime:", "fatal error"} {
		if strings.Contains(out, trace) {
			t.Errorf("the output carries the guest's trace (%q):\n%s", trace, out)
		}
	}
	if status["describe"] != "PASS" || !strings.Contains(out, "services not declared (ABI §2: its calls are unchecked)") {
		t.Errorf("describe %q:\n%s", status["describe"], out)
	}
	if status["services"] != "SKIP" || !strings.Contains(out, "unchecked, as the host does") {
		t.Errorf("services %q:\n%s", status["services"], out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
