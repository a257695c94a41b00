// Package testenv holds what the harnesses of real services share: finding
// repository files from a test's working directory, and the rule that a
// missing service skips a test, or fails it when RPENGINE_REQUIRE_E2E=1
// (CI), so end-to-end tests can never pass by being skipped there.
//
// It is for tests only and must never be imported by the engine.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// EnvRequire turns a skip for a missing service into a failure.
const EnvRequire = "RPENGINE_REQUIRE_E2E"

// Unavailable skips t because of why, or fails it under EnvRequire=1.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s (and %s=1)", why, EnvRequire)
	}
	t.Skip(why)
}

// RepoFile returns the path of rel (e.g. "scripts/placement/serve.py")
// under the module root, found by walking up from the working directory
// to the directory holding go.mod.
func RepoFile(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, rel)
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("%s missing: %w", rel, err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
