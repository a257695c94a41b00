package keystonetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// python is Debian's interpreter (see placementtest).
const python = "/usr/bin/python3"

// realConfig is keystone.conf: sqlite, fernet tokens, keys in the dir.
const realConfig = `[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///%[1]s/keystone.sqlite
[fernet_tokens]
key_repository = %[1]s/fernet
[credential]
key_repository = %[1]s/credential
[token]
expiration = 3600
`

// Real is Debian's Keystone 22, set up with this package's User,
// Password and Project (the user is admin on it), in region Region.
type Real struct {
	URL string
	svc *testenv.Service
}

// AuthURL is the v3 identity endpoint.
func (k *Real) AuthURL() string { return k.URL + "/v3" }

// StartReal sets up and starts a real Keystone for this test alone and
// stops it when the test ends. It costs about 30 s (keystone-manage
// db_sync is most of it). Without python3-keystone it skips, or fails
// with RPENGINE_REQUIRE_E2E=1 (scripts/keystone/install.sh installs it).
func StartReal(t testing.TB) *Real {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not using a real Keystone")
	}
	script, err := testenv.RepoFile("scripts/keystone/serve.py")
	if err != nil {
		testenv.Unavailable(t, err.Error())
	}
	if out, err := exec.Command(python, "-c", "import keystone.server.wsgi").CombinedOutput(); err != nil {
		testenv.Unavailable(t, fmt.Sprintf("real Keystone not installed (%v: %s); run scripts/keystone/install.sh", err, strings.TrimSpace(string(out))))
	}
	dir := t.TempDir()
	for _, d := range []string{"fernet", "credential"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "keystone.conf"), fmt.Appendf(nil, realConfig, dir), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.PythonEnv("OS_KEYSTONE_CONFIG_DIR=" + dir)
	setup := exec.Command(python, script, "setup", strconv.Itoa(port), User, Password, Project)
	setup.Env = env
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("keystone setup: %v\n%s", err, tail(out))
	}
	cmd := exec.Command(python, script, "serve", strconv.Itoa(port))
	cmd.Env = env
	ready := func(hc *http.Client, url string) bool { return testenv.GetOK(hc, url+"/v3") }
	svc, err := testenv.Launch(cmd, filepath.Join(dir, "keystone.log"), "http://127.0.0.1:"+strconv.Itoa(port),
		ready, 180*time.Second, 5*time.Second)
	if err != nil {
		t.Fatalf("start keystone: %v", err)
	}
	t.Cleanup(svc.Stop)
	return &Real{URL: svc.URL, svc: svc}
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// Token issues a project-scoped token for User, as the engine would.
func (k *Real) Token(t testing.TB) string {
	t.Helper()
	body := fmt.Sprintf(`{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": %q,
		"domain": {"id": "default"}, "password": %q}}}, "scope": {"project": {"name": %q, "domain": {"id": "default"}}}}}`,
		User, Password, Project)
	resp, err := http.Post(k.AuthURL()+"/auth/tokens", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("keystone token: %s", resp.Status)
	}
	return resp.Header.Get("X-Subject-Token")
}

// Revoke revokes token, as an operator's `openstack token revoke` does.
func (k *Real) Revoke(t testing.TB, token string) {
	t.Helper()
	req, _ := http.NewRequest("DELETE", k.AuthURL()+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", k.Token(t))
	req.Header.Set("X-Subject-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke token: %s", resp.Status)
	}
}

// Guarded is a service behind Keystone token validation.
type Guarded struct {
	URL      string
	rejected atomic.Int64
}

// Rejected counts requests refused with 401.
func (g *Guarded) Rejected() int { return int(g.rejected.Load()) }

// Guard serves h behind token validation against this Keystone, as
// keystonemiddleware does in front of Placement: a request whose token
// Keystone does not validate gets 401; the others reach h with the token
// "admin" (the role noauth2 services understand).
func (k *Real) Guard(t testing.TB, h http.Handler) *Guarded {
	t.Helper()
	service := k.Token(t)
	var mu sync.Mutex
	g := &Guarded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequest("GET", k.AuthURL()+"/auth/tokens", nil)
		mu.Lock()
		req.Header.Set("X-Auth-Token", service)
		mu.Unlock()
		req.Header.Set("X-Subject-Token", r.Header.Get("X-Auth-Token"))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			g.rejected.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 401, "title": "Unauthorized",
				"message": "The request you have made requires authentication."}})
			return
		}
		r.Header.Set("X-Auth-Token", "admin")
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}
