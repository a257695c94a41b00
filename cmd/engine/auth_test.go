package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// keystoneTOML is an [auth] table for the fake Keystone; Placement and
// the plugin's baremetal service come from its catalog.
func keystoneTOML(ks *keystonetest.Server, password string) string {
	return fmt.Sprintf(`[auth]
method = "password"
auth_url = %q
username = %q
password = %q
user_domain_name = "Default"
project_name = %q
refresh_before = "15m"
[plugin.services]
baremetal = "catalog"
`, ks.AuthURL(), keystonetest.User, password, keystonetest.Project)
}

// tokenRecorder stands in for a service granted to the plugin.
type tokenRecorder struct {
	mu     sync.Mutex
	tokens []string
}

func (r *tokenRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.tokens = append(r.tokens, req.Header.Get("X-Auth-Token"))
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// The daemon with Keystone: Placement found in the catalog and reached
// with the token, the first token refreshed before expiry, a revoked one
// replaced after one 401; validate reports the identity and the catalog.
func TestRunWithKeystone(t *testing.T) {
	ks := keystonetest.New()
	defer ks.Close()
	fake := placementfake.New()
	defer fake.Close()
	ks.Mount("placement", "placement", fake)
	ironic := &tokenRecorder{}
	srv := httptest.NewServer(ironic)
	defer srv.Close()
	ks.AddService("baremetal", srv.URL)
	ks.AgeNext(50 * time.Minute) // the first token (1 h) is inside refresh_before

	dir := t.TempDir()
	cfg := daemonConfig(t, dir, "", keystoneTOML(ks, keystonetest.Password))

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"validate", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"ok    auth: password as user rpengine, project service; token valid until",
		"ok    catalog: placement = " + ks.URL() + "/placement",
		"ok    catalog: plugin.services.baremetal (catalog) = " + srv.URL + "/",
		"ok    service baremetal at " + srv.URL + "/ answered 200",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("validate output lacks %q:\n%s", want, out.String())
		}
	}
	if len(ironic.tokens) != 1 || !ks.Valid(ironic.tokens[0]) {
		t.Errorf("the service got tokens %q; want one live token", ironic.tokens)
	}

	issued := len(ks.Issued())
	ks.AgeNext(50 * time.Minute) // again for the daemon's session
	d := startDaemon(t, cfg)
	d.waitFor("readiness", func() bool { code, _ := d.get("/readyz"); return code == 200 })
	if n := len(fake.ProviderUUIDs()); n != 12 {
		t.Fatalf("%d providers through Keystone", n)
	}
	if got := len(ks.Issued()) - issued; got != 2 || ks.Rejected() != 0 {
		t.Fatalf("%d tokens issued, %d requests refused; want the expiring token replaced up front", got, ks.Rejected())
	}
	if exp := d.metric("rpengine_auth_token_expiry_timestamp_seconds"); exp < float64(time.Now().Add(50*time.Minute).Unix()) {
		t.Fatalf("token expiry metric %v: want the refreshed token's, about an hour ahead", exp)
	}
	ks.Revoke()
	ok := d.metric(`rpengine_cycles_total{outcome="ok"}`)
	d.waitFor("cycles after revocation", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= ok+2 })
	if ks.Rejected() != 1 || d.metric(`rpengine_cycles_total{outcome="failed"}`) != 0 {
		t.Fatalf("rejected %d; failed cycles %v: a revoked token must cost one 401 and no cycle",
			ks.Rejected(), d.metric(`rpengine_cycles_total{outcome="failed"}`))
	}
	if _, page := d.get("/"); !strings.Contains(page, "auth password as user rpengine") {
		t.Fatal("the status page does not say who the engine is")
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(d.logs.String(), keystonetest.Password) {
		t.Fatal("the logs carry the password")
	}
}

func TestValidateNamesRefusedCredentials(t *testing.T) {
	ks := keystonetest.New()
	defer ks.Close()
	cfg := daemonConfig(t, t.TempDir(), "", keystoneTOML(ks, "wrong-password"))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--config", cfg}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "auth (password): keystone at") ||
		!strings.Contains(errb.String(), "credentials refused (401)") || strings.Contains(errb.String(), "wrong-password") {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
}

// keystoneCloud is a fake Keystone whose catalog names a fake Placement
// and the real Ironic at ironicURL (behind a proxy), as a cloud would.
func keystoneCloud(t *testing.T, ironicURL string) (*keystonetest.Server, *placementfake.Server) {
	t.Helper()
	ks := keystonetest.New()
	t.Cleanup(ks.Close)
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	ks.Mount("placement", "placement", fake)
	target, _ := url.Parse(ironicURL)
	ks.Mount("baremetal", "baremetal", httputil.NewSingleHostReverseProxy(target))
	return ks, fake
}

// ironicConfig writes a config for the Ironic plugin as engine id, with
// password auth at ks, and returns its path.
func ironicConfig(t *testing.T, id string, ks *keystonetest.Server) string {
	t.Helper()
	text := fmt.Sprintf(`[engine]
id = %q
state_file = "state.json"
[plugin]
path = %q
cache_dir = %q
%s`, id, plugintest.Build(t, "plugins/ironic"), plugintest.CacheDir(), keystoneTOML(ks, keystonetest.Password))
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}
