package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// previousRelease is the commit of the release before this one (0.1.0,
// CHANGELOG.md); docs/UPGRADE.md promises that its state and its plugins
// carry over.
const previousRelease = "772d8ff"

// buildPrevious builds the previous release's engine and fake plugin from
// git history into a temporary directory.
func buildPrevious(t *testing.T) (engineBin, fakeWasm string) {
	t.Helper()
	root := plugintest.RepoRoot(t)
	if err := exec.Command("git", "-C", root, "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		if os.Getenv("RPENGINE_REQUIRE_E2E") != "" {
			t.Fatalf("commit %s (the previous release) is not in this clone's history: %v", previousRelease, err)
		}
		t.Skipf("commit %s is not in this clone's history (a shallow clone?)", previousRelease)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	run := func(env []string, name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = src, append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run(nil, "sh", "-c", fmt.Sprintf("git -C %q archive %s | tar -x", root, previousRelease))
	engineBin, fakeWasm = filepath.Join(dir, "engine-0.1.0"), filepath.Join(dir, "fake-0.1.0.wasm")
	plain := []string{"GOWORK=off", "GOFLAGS=-buildvcs=false"}
	run(plain, "go", "build", "-o", engineBin, "./cmd/engine")
	run(append(plain, "GOOS=wasip1", "GOARCH=wasm"), "go", "build", "-buildmode=c-shared", "-o", fakeWasm, "./plugins/fake")
	return engineBin, fakeWasm
}

// onceWith runs `once --json` with the given engine binary.
func onceWith(t *testing.T, bin, cfg string) report {
	t.Helper()
	cmd := exec.Command(bin, "once", "--config", cfg, "--json")
	out, err := cmd.Output()
	var r report
	if jerr := json.Unmarshal(out, &r); jerr != nil || err != nil || len(r.Errors) > 0 {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s once: %v, errors %v, stdout %q, stderr %s", bin, err, r.Errors, out, stderr)
	}
	return r
}

func setPlugin(t *testing.T, cfg, from, to string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), fmt.Sprintf("path = %q", from), fmt.Sprintf("path = %q", to), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeFromPreviousReleaseE2E: the previous release writes a fleet
// and its state file against the real Placement; this build then runs on
// that state, first with the previous release's plugin (built by the
// previous SDK), then with its own: no errors, nothing created or deleted,
// and the state it leaves is idle (one request, no write).
func TestUpgradeFromPreviousReleaseE2E(t *testing.T) {
	url := placementtest.Shared(t)
	oldEngine, oldFake := buildPrevious(t)
	// This build inspects the previous SDK's plugin: ABI v1 like its own.
	res := runEngine(t, "plugin", "inspect", oldFake)
	if res.code != 0 || !strings.Contains(res.stdout, "abi version:   1\n") || !strings.Contains(res.stdout, "name:          fake\n") {
		t.Fatalf("engine plugin inspect of the previous SDK's fake: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	newFake := plugintest.Build(t, "plugins/fake")
	const nodes = 12
	cfg := writeConfig(t, fmt.Sprintf("upg-%x", os.Getpid()), url, oldFake,
		fmt.Sprintf("\n[plugin.config]\nnodes = %d\nseed = 7\nresource_classes = [\"baremetal-gold\"]\nmaintenance_fraction = 0.2\ninstance_fraction = 0.3\n", nodes))
	state := filepath.Join(filepath.Dir(cfg), "state.json")

	r := onceWith(t, oldEngine, cfg)
	t.Logf("0.1.0 cold: created %d, %d requests", r.Created, r.PlacementRequests)
	if r.Created != nodes {
		t.Fatalf("previous release, cold: %+v", r)
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatalf("the previous release wrote no state file: %v", err)
	}

	r = onceWith(t, engineBin(t), cfg)
	t.Logf("this build, 0.1.0's state and plugin: updated %d, unchanged %d, %d requests", r.Updated, r.Unchanged, r.PlacementRequests)
	if r.Created != 0 || r.Deleted != 0 || r.Unchanged+r.Updated != nodes {
		t.Fatalf("this build on the previous state, with the previous SDK's plugin: %+v", r)
	}
	setPlugin(t, cfg, oldFake, newFake)
	r = onceWith(t, engineBin(t), cfg)
	t.Logf("this build, its own plugin: updated %d, unchanged %d, %d requests", r.Updated, r.Unchanged, r.PlacementRequests)
	if r.Created != 0 || r.Deleted != 0 || r.Unchanged+r.Updated != nodes {
		t.Fatalf("this build with its own plugin: %+v", r)
	}
	r = onceWith(t, engineBin(t), cfg)
	if r.Created+r.Updated+r.Deleted != 0 || r.Unchanged != nodes || r.PlacementRequests != 1 {
		t.Fatalf("this build, idle on the state it upgraded: %+v", r)
	}
	var f struct {
		Version   int                        `json:"version"`
		Providers map[string]json.RawMessage `json:"providers"`
	}
	after, _ := os.ReadFile(state)
	if err := json.Unmarshal(after, &f); err != nil || f.Version != 1 || len(f.Providers) != nodes {
		t.Fatalf("state after the upgrade: version %d, %d providers, %v (before: %d bytes)", f.Version, len(f.Providers), err, len(before))
	}
}
