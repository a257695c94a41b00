// Package plugintest builds the repository's Wasm plugins for tests, once
// per test process, and shares a wazero compilation cache between tests.
// It is for tests only and never ships in the engine.
package plugintest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Build compiles the plugin package (e.g. "plugins/fake", relative to the
// repository root) for wasip1 and returns the path of the .wasm file. If
// RPENGINE_PLUGIN_DIR holds a prebuilt <name>.wasm (make does this), it is
// used as is.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	name := filepath.Base(pkg) + ".wasm"
	if dir := os.Getenv("RPENGINE_PLUGIN_DIR"); dir != "" {
		if p := filepath.Join(dir, name); exists(p) {
			built[pkg] = p
			return p
		}
	}
	root := RepoRoot(tb)
	out := filepath.Join(os.TempDir(), "rpengine-test-plugins", name)
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./"+pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out
}

// CacheDir is a compilation cache shared by all tests on this machine.
func CacheDir() string { return filepath.Join(os.TempDir(), "rpengine-test-wazero-cache") }

// RepoRoot walks up from the working directory to the directory of go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for !exists(filepath.Join(dir, "go.mod")) {
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
	return dir
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
