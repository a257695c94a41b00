// Package plugintest finds the repository's Wasm plugins for tests by
// their path from the repository root ("plugins/fake"). The building is
// guesttest.Build's, the one plugin builder: once per test process, into a
// directory of its own, or the prebuilt file make leaves in
// $RPENGINE_PLUGIN_DIR. It is for tests only and never ships in the engine.
package plugintest

import (
	"path/filepath"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// Build returns the .wasm file of the plugin package pkg (e.g.
// "plugins/fake", relative to the repository root), built for wasip1.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	return guesttest.Build(tb, filepath.Join(RepoRoot(tb), pkg))
}

// CacheDir is the wazero compilation cache shared by all tests on this
// machine (guesttest.CacheDir).
func CacheDir() string { return guesttest.CacheDir() }

// RepoRoot is the directory of go.mod above the working directory.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	p, err := testenv.RepoFile("go.mod")
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Dir(p)
}
