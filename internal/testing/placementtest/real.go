package placementtest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

const (
	// EnvRequire set to "1" turns "Placement is not installed" from a skip
	// into a failure, for CI jobs that must run the end-to-end tests.
	EnvRequire = testenv.EnvRequire
	// EnvURL points at an already running Placement to use instead of
	// starting one (token "admin" must be accepted, i.e. noauth2).
	EnvURL = "RPENGINE_PLACEMENT_URL"

	// python is Debian's interpreter: the one on PATH may be a pyenv shim
	// that cannot import the python3-placement package.
	python = "/usr/bin/python3"

	readyTimeout = 60 * time.Second
)

// StartReal starts a real Placement for this test alone and returns its
// base URL; it is stopped when the test ends. Starting costs about 1.5-2.5 s,
// so prefer Shared unless the test needs an empty server.
func StartReal(t testing.TB) string {
	t.Helper()
	skipShort(t)
	if u := os.Getenv(EnvURL); u != "" {
		return strings.TrimSuffix(u, "/")
	}
	requireInstalled(t)
	dir := t.TempDir()
	p, err := start(dir)
	if err != nil {
		t.Fatalf("start placement: %v", err)
	}
	t.Cleanup(p.Stop)
	return p.URL
}

// StartRealLogged is StartReal, and also returns the path of the
// server's own log (oslo.log's lines, one per request from
// placement.requestlog). A test that reads it skips when EnvURL names a
// server whose log it cannot read.
func StartRealLogged(t testing.TB) (url, log string) {
	t.Helper()
	skipShort(t)
	if os.Getenv(EnvURL) != "" {
		t.Skip(EnvURL + " is set: this test reads the log of a Placement it starts")
	}
	requireInstalled(t)
	p, err := start(t.TempDir())
	if err != nil {
		t.Fatalf("start placement: %v", err)
	}
	t.Cleanup(p.Stop)
	return p.URL, p.Log
}

var shared struct {
	once sync.Once
	p    *testenv.Service
	dir  string
	err  error
}

// Shared returns the URL of one real Placement shared by the whole test
// binary, starting it on first use. Tests using it must create uniquely
// named objects. Call Main from TestMain so it is stopped at the end; if a
// binary forgets, the process still dies with the test binary on Linux.
func Shared(t testing.TB) string {
	t.Helper()
	skipShort(t)
	if u := os.Getenv(EnvURL); u != "" {
		return strings.TrimSuffix(u, "/")
	}
	requireInstalled(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "placementtest-")
		if shared.err == nil {
			shared.p, shared.err = start(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatalf("start shared placement: %v", shared.err)
	}
	return shared.p.URL
}

// Main runs the tests and then stops the shared Placement, if one was
// started. Use it as: func TestMain(m *testing.M) { placementtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if shared.p != nil {
		shared.p.Stop()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// skipShort keeps "go test -short" free of real services, as `make unit`
// promises.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not using a real Placement")
	}
}

var installed struct {
	once sync.Once
	why  string // empty when Placement can be started
}

// requireInstalled skips (or, with RPENGINE_REQUIRE_E2E=1, fails) the test
// when Placement or the repository's launcher is missing.
func requireInstalled(t testing.TB) {
	t.Helper()
	installed.once.Do(func() {
		if _, err := serveScript(); err != nil {
			installed.why = err.Error()
			return
		}
		out, err := exec.Command(python, "-c", "import placement").CombinedOutput()
		if err != nil {
			if msg := strings.TrimSpace(string(out)); msg != "" {
				err = fmt.Errorf("%w: %s", err, msg)
			}
			installed.why = fmt.Sprintf("real Placement not installed (%s -c 'import placement': %v); run scripts/placement/install.sh", python, err)
		}
	})
	if installed.why != "" {
		testenv.Unavailable(t, installed.why)
	}
}

// serveScript finds scripts/placement/serve.py in the repository.
func serveScript() (string, error) { return testenv.RepoFile("scripts/placement/serve.py") }

// start launches a Placement in dir on a free port.
func start(dir string) (*testenv.Service, error) { return Launch(dir, 0) }

// Launch starts a real Placement in dir, on port (0: a free one), and
// returns once it answers; Stop ends it. It is the one way this
// repository starts Placement from Go (tests and bench), with the same
// scripts/placement/placement.conf and serve.py as start.sh. Its database
// is the file DatabaseFile in dir: launched again in the same dir, it
// keeps its data; remove the file first for an empty one.
func Launch(dir string, port int) (*testenv.Service, error) { return launchConf(dir, port, "") }

// DatabaseFile is the name of the sqlite file a Placement started by
// Launch or start.sh keeps its data in, in its directory.
const DatabaseFile = "placement.sqlite"

// launchConf is Launch with extra lines appended to placement.conf (its
// last section is [placement_database]), for the test that shortens
// the connection recycle time.
func launchConf(dir string, port int, extra string) (*testenv.Service, error) {
	conf, err := testenv.RepoFile("scripts/placement/placement.conf")
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		return nil, err
	}
	b = append(b, extra...)
	if err := os.WriteFile(filepath.Join(dir, "placement.conf"), b, 0o600); err != nil {
		return nil, err
	}
	for range 3 {
		var p *testenv.Service
		if p, err = launch(dir, port); port != 0 || !errors.Is(err, testenv.ErrExited) {
			return p, err
		}
	}
	return nil, err
}

func launch(dir string, port int) (*testenv.Service, error) {
	script, err := serveScript()
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = testenv.FreePort(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(python, script, strconv.Itoa(port))
	cmd.Env = testenv.PythonEnv("OS_PLACEMENT_CONFIG_DIR=" + dir)
	cmd.Dir = dir // placement.conf names the database relative to it
	// Ready when GET /resource_providers answers for the admin: that
	// proves the database and the policy work, not just the socket.
	ready := func(hc *http.Client, url string) bool {
		return testenv.GetOK(hc, url+"/resource_providers", "X-Auth-Token", "admin")
	}
	// serve.py exits at once on SIGTERM; kill it after 5 s anyway.
	return testenv.Launch(cmd, filepath.Join(dir, "api-"+strconv.Itoa(port)+".log"),
		"http://127.0.0.1:"+strconv.Itoa(port), ready, readyTimeout, 5*time.Second)
}
