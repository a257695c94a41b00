package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestTwoDemosSideBySideE2E runs scripts/demo.sh twice at once, each in its
// own directory: each must start its own Placement and status page on free
// ports (not 8778 and 9180, not each other's), reconcile the 20 fake nodes
// into its own Placement alone, and leave a daemon whose status page
// answers. Then `demo.sh stop` stops each.
func TestTwoDemosSideBySideE2E(t *testing.T) {
	placementtest.Shared(t) // skips (or fails under RPENGINE_REQUIRE_E2E) without Placement
	root := plugintest.RepoRoot(t)
	env := demoEnv(engineBin(t), plugintest.Build(t, "plugins/fake"))
	dirs := []string{t.TempDir(), t.TempDir()}
	outs := make([]string, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		t.Cleanup(func() { demoCmd(root, dir, env, "stop").Run() })
		wg.Go(func() {
			b, err := demoCmd(root, dir, env).CombinedOutput()
			outs[i], errs[i] = string(b), err
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, dir := range dirs {
		if errs[i] != nil {
			t.Fatalf("demo %d: %v\n%s", i, errs[i], outs[i])
		}
		listen, url := readTrim(t, dir, "listen"), readTrim(t, dir, "placement/url")
		for _, s := range []string{listen, url} {
			if seen[s] || strings.HasSuffix(s, ":8778") || strings.HasSuffix(s, ":9180") {
				t.Errorf("demo %d: address %s is shared or fixed", i, s)
			}
			seen[s] = true
		}
		if !strings.Contains(outs[i], "http://"+listen+"/") {
			t.Errorf("demo %d does not print its status page %s:\n%s", i, listen, outs[i])
		}
		if n := countProviders(t, url); n != 20 {
			t.Errorf("demo %d: its Placement holds %d providers, want its own 20", i, n)
		}
		resp, err := http.Get("http://" + listen + "/readyz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("demo %d: the daemon's /readyz: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
}

func demoEnv(bin, fake string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, placementtest.EnvURL+"=") {
			env = append(env, kv)
		}
	}
	return append(env, "RPENGINE_ENGINE_BIN="+bin, "RPENGINE_FAKE_PLUGIN="+fake)
}

func demoCmd(root, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(root, "scripts/demo.sh"), args...)
	// A copy: appended to env itself, two demos started at once could
	// share one backing array and both run in the last dir written.
	cmd.Env = append(slices.Clip(env), "RPENGINE_DEMO_DIR="+dir)
	return cmd
}

func readTrim(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func countProviders(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/resource_providers", nil)
	req.Header.Set("X-Auth-Token", "admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Providers []json.RawMessage `json:"resource_providers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return len(body.Providers)
}
