package guesttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildMu  sync.Mutex
	built    = map[string]string{}
	buildDir string
)

// Build compiles the plugin package in dir (a directory, e.g. "." in the
// plugin's own test, or "../hostile") for GOOS=wasip1 with
// -buildmode=c-shared and the given build tags, and returns the .wasm
// file. Each (dir, tags) is built once per test process, into a directory
// of its own, so parallel test processes never read a half-written file.
// With no tags, a prebuilt $RPENGINE_PLUGIN_DIR/<name>.wasm is used as is
// (make builds them).
func Build(tb testing.TB, dir string, tags ...string) string {
	tb.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	key := abs + " " + strings.Join(tags, ",")
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[key]; ok {
		return p
	}
	name := filepath.Base(abs)
	if pre := os.Getenv("RPENGINE_PLUGIN_DIR"); pre != "" && len(tags) == 0 {
		if p := filepath.Join(pre, name+".wasm"); exists(p) {
			built[key] = p
			return p
		}
	}
	if buildDir == "" {
		if buildDir, err = os.MkdirTemp("", "rpengine-plugins-"); err != nil {
			tb.Fatal(err)
		}
	}
	out := filepath.Join(buildDir, strings.Join(append([]string{name}, tags...), "-")+".wasm")
	args := []string{"build", "-buildmode=c-shared", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build plugin %s (tags %v): %v\n%s", dir, tags, err, b)
	}
	built[key] = out
	return out
}

// CacheDir is a wazero compilation cache shared by every test on this
// machine: compiling a plugin takes seconds, loading it from the cache
// tenths of a second.
func CacheDir() string { return filepath.Join(os.TempDir(), "rpengine-test-wazero-cache") }

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
