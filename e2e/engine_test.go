package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// engineBin returns the engine binary: RPENGINE_ENGINE_BIN (make sets it)
// or a fresh build.
func engineBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RPENGINE_ENGINE_BIN"); p != "" {
		return p
	}
	binOnce.Do(func() {
		// One binary per checkout: test runs of other worktrees on the same
		// machine must not replace it with their own build mid-test.
		root := plugintest.RepoRoot(t)
		h := fnv.New32a()
		h.Write([]byte(root))
		binPath = filepath.Join(os.TempDir(), fmt.Sprintf("rpengine-e2e-engine-%x", h.Sum32()))
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/engine")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build engine: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type result struct {
	stdout, stderr string
	code           int
}

func runEngine(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(engineBin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// report is the JSON `engine once --json` prints.
type report struct {
	Nodes, Instances, Created, Updated, Unchanged, Deleted, Quarantined int
	Errors                                                              []engine.Error
	PlacementRequests                                                   int `json:"placement_requests"`
	DurationMS                                                          int `json:"duration_ms"`
}

// ErrorMessages lists the errors' messages.
func (r report) ErrorMessages() []string { return engine.Report{Errors: r.Errors}.ErrorMessages() }

func once(t *testing.T, cfg string) report {
	t.Helper()
	res := runEngine(t, "once", "--config", cfg, "--json")
	var r report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("engine once: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	if res.code != 0 || len(r.Errors) > 0 {
		t.Fatalf("engine once: exit %d, errors %v, stderr %s", res.code, r.Errors, res.stderr)
	}
	return r
}

// writeConfig writes a config for engine id at url with the given
// [plugin] path and extra TOML (e.g. the [plugin.config] table).
func writeConfig(t *testing.T, id, url, plugin, extra string) string {
	t.Helper()
	dir := t.TempDir()
	text := fmt.Sprintf(`[engine]
id = %q
interval = "5s"
state_file = "state.json"
delete_grace = "0s"
delete_limit = 0.5

[provider]
marker_traits = ["COMPUTE_NODE"]

[placement]
endpoint = %q
token = "admin"

[plugin]
path = %q
timeout = "30s"
cache_dir = %q
%s`, id, url, plugin, plugintest.CacheDir(), extra)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// placementGet reads a Placement URL path as the admin, at 1.39.
func placementGet(t *testing.T, base, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", strings.TrimRight(base, "/")+path, nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

type inventory struct {
	Total, Reserved, MinUnit, MaxUnit, StepSize int64
	AllocationRatio                             float64 `json:"allocation_ratio"`
}

// providerView is what Placement holds for one provider.
type providerView struct {
	Name        string
	Inventories map[string]inventory
	Traits      []string
}

func readProvider(t *testing.T, base, uuid string) (providerView, bool) {
	t.Helper()
	var p providerView
	var rp struct{ Name string }
	if placementGet(t, base, "/resource_providers/"+uuid, &rp) == 404 {
		return p, false
	}
	p.Name = rp.Name
	var inv struct {
		Inventories map[string]struct {
			Total           int64   `json:"total"`
			Reserved        int64   `json:"reserved"`
			MinUnit         int64   `json:"min_unit"`
			MaxUnit         int64   `json:"max_unit"`
			StepSize        int64   `json:"step_size"`
			AllocationRatio float64 `json:"allocation_ratio"`
		} `json:"inventories"`
	}
	placementGet(t, base, "/resource_providers/"+uuid+"/inventories", &inv)
	p.Inventories = map[string]inventory{}
	for rc, i := range inv.Inventories {
		p.Inventories[rc] = inventory{i.Total, i.Reserved, i.MinUnit, i.MaxUnit, i.StepSize, i.AllocationRatio}
	}
	var tr struct{ Traits []string }
	placementGet(t, base, "/resource_providers/"+uuid+"/traits", &tr)
	p.Traits = tr.Traits
	return p, true
}

// placementDo sends one admin request at 1.39 and returns status and body.
func placementDo(t *testing.T, base, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, strings.TrimRight(base, "/")+path, rd)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// onceAllowingErrors runs `engine once --json` and returns its report and
// exit code, for cycles expected to report errors.
func onceAllowingErrors(t *testing.T, cfg string) (report, int) {
	t.Helper()
	res := runEngine(t, "once", "--config", cfg, "--json")
	var r report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("engine once: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	return r, res.code
}
