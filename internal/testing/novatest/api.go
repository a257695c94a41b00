package novatest

import (
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// StartAPI serves nova 26.2.2's own compute API (its APIRouterV21, noauth:
// every request is an admin's) over nova databases under dir, on a free
// port of 127.0.0.1 (scripts/nova/api.py), and returns its endpoint,
// ending in /v2.1. It is stopped when the test ends; skips as Start does
// when nova is not installed.
func StartAPI(t testing.TB, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running nova")
	}
	requireInstalled(t)
	script, err := testenv.RepoFile("scripts/nova/api.py")
	if err != nil {
		t.Fatal(err)
	}
	var s *testenv.Service
	for range 3 { // another process may take the free port first
		var port int
		if port, err = testenv.FreePort(); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(python, script, dir, strconv.Itoa(port))
		cmd.Env = testenv.PythonEnv()
		url := "http://127.0.0.1:" + strconv.Itoa(port) + "/v2.1"
		ready := func(hc *http.Client, url string) bool { return testenv.GetOK(hc, url+"/os-aggregates") }
		if s, err = testenv.Launch(cmd, filepath.Join(dir, "nova-api.log"), url, ready, apiTimeout, 0); !errors.Is(err, testenv.ErrExited) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start nova's API: %v", err)
	}
	t.Cleanup(s.Stop)
	return s.URL
}

// apiTimeout bounds the API's start: the schema template the first time
// on a machine (a minute or more), seconds after.
const apiTimeout = 5 * time.Minute
