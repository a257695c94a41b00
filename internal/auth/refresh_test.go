package auth_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// A refresh_before at or above the token's lifetime made every request
// log in again (quiet cycles 4.5 s instead of 42 ms): it is clamped to
// half the lifetime, with a warning, and a fresh token is kept.
func TestRefreshBeforeAboveTheLifetimeIsClamped(t *testing.T) {
	ks := keystone(t)
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	ks.Mount("placement", "placement", fake)
	ks.SetLifetimes(10 * time.Minute)
	var logs bytes.Buffer
	cfg := passwordConfig(ks)
	cfg.RefreshBefore = time.Hour
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := open(t, cfg)
	if got := s.RefreshBefore(); got != 5*time.Minute {
		t.Fatalf("refresh before %v, want 5m (half the 10m lifetime)", got)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "auth.refresh_before") {
		t.Fatalf("no warning naming auth.refresh_before: %s", logs.String())
	}
	endpoint, _ := s.Endpoint("placement")
	pc, err := placement.New(t.Context(), placement.Config{Endpoint: endpoint, Provider: s.Provider()})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		s.Header("baremetal")
		if _, err := pc.ListProviders(t.Context(), url.Values{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ks.Issued()); n != 1 {
		t.Fatalf("%d logins for 5 cycles' requests; want the first one only", n)
	}
}

func TestRefreshBeforeBelowTheLifetimeIsKept(t *testing.T) {
	ks := keystone(t)
	cfg := passwordConfig(ks)
	cfg.RefreshBefore = 59 * time.Minute
	if got := open(t, cfg).RefreshBefore(); got != 59*time.Minute {
		t.Fatalf("refresh before %v, want 59m kept", got)
	}
}

// A revoked token and a credential that no longer works: the 401 leads to
// one re-authentication, which fails; the failure is counted and named.
func TestFailedReauthenticationIsCountedAndNamed(t *testing.T) {
	ks := keystone(t)
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	ks.Mount("placement", "placement", fake)
	s := open(t, passwordConfig(ks))
	endpoint, _ := s.Endpoint("placement")
	pc, err := placement.New(t.Context(), placement.Config{Endpoint: endpoint, Provider: s.Provider()})
	if err != nil {
		t.Fatal(err)
	}
	ks.Revoke()
	ks.RefuseLogins(true)
	_, err = pc.ListProviders(t.Context(), url.Values{})
	if err == nil || !strings.Contains(err.Error(), "credentials refused (401)") {
		t.Fatalf("err = %v; want the refused re-authentication named", err)
	}
	if s.LoginFailures() != 1 || s.LastLoginError() == nil {
		t.Fatalf("failures %d, last %v", s.LoginFailures(), s.LastLoginError())
	}
	ks.RefuseLogins(false)
	if _, err := pc.ListProviders(t.Context(), url.Values{}); err != nil {
		t.Fatalf("after Keystone accepts again: %v", err)
	}
	if s.LoginFailures() != 1 || s.LastLoginError() != nil {
		t.Fatalf("failures %d, last %v; want the old count and no current error", s.LoginFailures(), s.LastLoginError())
	}
}

func TestKeystoneFailuresNameTheirCause(t *testing.T) {
	ks := keystone(t)
	closed := func() string { // a port nobody listens on
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		return "http://" + l.Addr().String() + "/v3"
	}()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error": {"code": 503, "message": "database   unavailable"}}`))
	}))
	t.Cleanup(plain.Close)
	cases := []struct {
		name string
		edit func(*auth.Config)
		want string
	}{
		{"wrong password", func(c *auth.Config) { c.Password = "nope-not-it" }, "credentials refused (401)"},
		{"unreachable", func(c *auth.Config) { c.AuthURL = closed }, "unreachable"},
		{"unknown host", func(c *auth.Config) { c.AuthURL = "http://keystone.invalid/v3" }, "not found (DNS)"},
		{"untrusted TLS", func(c *auth.Config) { c.AuthURL = tlsSrv.URL + "/v3" }, "set auth.cacert"},
		{"TLS to a plain port", func(c *auth.Config) { c.AuthURL = strings.Replace(plain.URL, "http:", "https:", 1) + "/v3" }, "does not speak TLS"},
		{"keystone down", func(c *auth.Config) { c.AuthURL = plain.URL + "/v3" }, "failed (503), try again later; keystone says: database unavailable"},
	}
	for _, tc := range cases {
		cfg := passwordConfig(ks)
		tc.edit(&cfg)
		cfg.Timeout = 5 * time.Second
		_, err := auth.Open(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v; want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "nope-not-it") {
			t.Errorf("%s: error leaks the password", tc.name)
		}
	}
}
