package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// With plugin.sha256 set, a replaced plugin file is refused by the reload
// its content change starts, named in the log, and the pinned plugin goes
// on serving; an unpinned digest is refused at start.
func TestPinnedPluginRefusesAReplacedFile(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	dir := t.TempDir()
	built := plugintest.Build(t, "plugins/fake")
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "fake.wasm")
	os.WriteFile(local, b, 0o644)
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	cfg := daemonConfig(t, dir, fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	text, _ := os.ReadFile(cfg)
	pinned := strings.Replace(string(text), fmt.Sprintf("path = %q", built), fmt.Sprintf("path = %q\nsha256 = %q", local, digest), 1)
	os.WriteFile(cfg, []byte(pinned), 0o644)

	d := startDaemon(t, cfg)
	d.waitFor("readiness", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	// Another build: the same plugin with one more byte (a custom section's worth).
	os.WriteFile(local, append(b, 0), 0o644)
	d.waitFor("the refused reload", func() bool { return d.metric(`rpengine_config_reloads_total{result="failed"}`) >= 1 })
	before := d.metric(`rpengine_cycles_total{outcome="ok"}`)
	d.waitFor("cycles after the refusal", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= before+2 })
	if !strings.Contains(d.logs.String(), "as plugin.sha256 pins: refused") || !strings.Contains(d.logs.String(), local) {
		t.Fatalf("the log does not name the file and the pin:\n%s", d.logs)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	// At start: refused outright.
	os.WriteFile(local, b, 0o644)
	os.WriteFile(cfg, []byte(strings.Replace(pinned, digest, strings.Repeat("0", 64), 1)), 0o644)
	if code := run(t.Context(), []string{"run", "--config", cfg}, os.Stdout, &syncBuffer{}); code == 0 {
		t.Fatal("a mismatched pin started")
	}
}
