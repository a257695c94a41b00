package auth_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Against Debian's real Keystone: a revoked token makes the 401 from
// Placement re-authenticate once and retry the request (gophercloud's
// AllowReauth), and Keystone's refusals are named.
func TestRealKeystone(t *testing.T) {
	k := keystonetest.StartReal(t)
	cfg := auth.Config{Method: auth.Password, AuthURL: k.AuthURL(), Username: keystonetest.User,
		Password: keystonetest.Password, UserDomainID: "default", ProjectName: keystonetest.Project}

	t.Run("revoked token", func(t *testing.T) {
		fake := placementfake.New()
		t.Cleanup(fake.Close)
		guarded := k.Guard(t, fake)
		s, err := auth.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := placement.New(t.Context(), placement.Config{Endpoint: guarded.URL, Provider: s.Provider()})
		if err != nil {
			t.Fatal(err)
		}
		first := s.Provider().Token()
		k.Revoke(t, first)
		before := pc.Requests()
		if _, err := pc.ListProviders(t.Context(), url.Values{}); err != nil {
			t.Fatalf("after revocation: %v", err)
		}
		if guarded.Rejected() != 1 || pc.Requests()-before != 2 || s.Provider().Token() == first {
			t.Fatalf("rejected %d, requests %d, token renewed %v; want one 401, one retry, a new token",
				guarded.Rejected(), pc.Requests()-before, s.Provider().Token() != first)
		}
		if s.LoginFailures() != 0 {
			t.Fatalf("%d login failures", s.LoginFailures())
		}
	})

	t.Run("refusals named", func(t *testing.T) {
		for name, edit := range map[string]func(*auth.Config){
			"wrong password":  func(c *auth.Config) { c.Password = "nope-not-it" },
			"unknown project": func(c *auth.Config) { c.ProjectName = "no-such-project" },
			"unknown user":    func(c *auth.Config) { c.Username = "nobody" },
		} {
			c := cfg
			edit(&c)
			_, err := auth.Open(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), "credentials refused (401)") || strings.Contains(err.Error(), "nope-not-it") {
				t.Errorf("%s: %v", name, err)
			}
			t.Logf("%s: %v", name, err)
		}
	})
}
