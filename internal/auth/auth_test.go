package auth_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

func keystone(t *testing.T) *keystonetest.Server {
	t.Helper()
	ks := keystonetest.New()
	t.Cleanup(ks.Close)
	return ks
}

func passwordConfig(ks *keystonetest.Server) auth.Config {
	return auth.Config{Method: auth.Password, AuthURL: ks.AuthURL(), Username: keystonetest.User,
		Password: keystonetest.Password, UserDomainName: keystonetest.UserDomain, ProjectName: keystonetest.Project}
}

func open(t *testing.T, cfg auth.Config) *auth.Session {
	t.Helper()
	s, err := auth.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPasswordIssuesATokenAndReadsTheCatalog(t *testing.T) {
	ks := keystone(t)
	ks.AddService("placement", "http://placement.example:8778/")
	ks.AddService("baremetal", "http://ironic.example:6385")
	s := open(t, passwordConfig(ks))

	issued := ks.Issued()
	if len(issued) != 1 || issued[0].Method != "password" {
		t.Fatalf("issued %+v, want one password token", issued)
	}
	if s.Provider().Token() != issued[0].Token {
		t.Fatalf("session holds %q, keystone issued %q", s.Provider().Token(), issued[0].Token)
	}
	if !s.Expires().Equal(issued[0].ExpiresAt.Truncate(time.Microsecond)) {
		t.Fatalf("expires %v, want %v", s.Expires(), issued[0].ExpiresAt)
	}
	got, err := s.Endpoint("placement")
	if err != nil || got != "http://placement.example:8778/" {
		t.Fatalf("placement endpoint %q, %v", got, err)
	}
	svcs, err := s.Services(map[string]string{
		"baremetal": "catalog", "ironic": "catalog:baremetal", "compute": "http://nova.example/v2.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"baremetal": "http://ironic.example:6385/", "ironic": "http://ironic.example:6385/",
		"compute": "http://nova.example/v2.1"}
	for k, v := range want {
		if svcs[k] != v {
			t.Errorf("service %s = %q, want %q", k, svcs[k], v)
		}
	}
	if name, value := s.Header("baremetal"); name != "X-Auth-Token" || value != issued[0].Token {
		t.Fatalf("header %s: %s", name, value)
	}
	if strings.Contains(s.String(), keystonetest.Password) {
		t.Fatalf("description leaks the password: %s", s)
	}
}

func TestCatalogMissesAreNamed(t *testing.T) {
	ks := keystone(t)
	ks.AddService("placement", "http://placement.example/")
	s := open(t, passwordConfig(ks))
	_, err := s.Services(map[string]string{"baremetal": "catalog"})
	if err == nil || !strings.Contains(err.Error(), `plugin.services.baremetal: service catalog lists no "baremetal" endpoint on interface public`) {
		t.Fatalf("err = %v", err)
	}
	cfg := passwordConfig(ks)
	cfg.Interface, cfg.Region = "admin", "RegionTwo"
	_, err = open(t, cfg).Endpoint("placement")
	if err == nil || !strings.Contains(err.Error(), "interface admin, region RegionTwo") {
		t.Fatalf("err = %v", err)
	}
	cfg.Interface, cfg.Region = "internal", keystonetest.Region
	if got, err := open(t, cfg).Endpoint("placement"); err != nil || got != "http://placement.example/" {
		t.Fatalf("internal endpoint %q, %v", got, err)
	}
}

func TestApplicationCredentials(t *testing.T) {
	ks := keystone(t)
	byID := auth.Config{Method: auth.ApplicationCredential, AuthURL: ks.AuthURL(),
		ApplicationCredentialID: keystonetest.AppCredID, ApplicationCredentialSecret: keystonetest.AppSecret}
	byName := auth.Config{Method: auth.ApplicationCredential, AuthURL: ks.AuthURL(), Username: keystonetest.User,
		ApplicationCredentialName: keystonetest.AppCredName, ApplicationCredentialSecret: keystonetest.AppSecret}
	for _, cfg := range []auth.Config{byID, byName} {
		if s := open(t, cfg); s.Method() != auth.ApplicationCredential {
			t.Fatalf("method %s", s.Method())
		}
	}
	if n := len(ks.Issued()); n != 2 || ks.Issued()[1].Method != "application_credential" {
		t.Fatalf("issued %+v", ks.Issued())
	}
}

func TestRefusedCredentialsAreNamedWithoutTheSecret(t *testing.T) {
	ks := keystone(t)
	cfg := passwordConfig(ks)
	cfg.Password = "wrong-horse-battery"
	_, err := auth.Open(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "credentials refused (401)") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), cfg.Password) {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestMissingFieldsAreNamed(t *testing.T) {
	cases := []struct {
		cfg  auth.Config
		want string
	}{
		{auth.Config{Method: auth.Password}, "needs auth_url, username or user_id, password, project_name or project_id"},
		{auth.Config{Method: auth.ApplicationCredential, AuthURL: "http://k/v3", ApplicationCredentialName: "a"},
			"needs application_credential_secret, username or user_id (with application_credential_name)"},
		{auth.Config{Method: auth.Cloud}, "needs auth.cloud"},
		{auth.Config{Method: "kerberos"}, `auth.method "kerberos"`},
		{auth.Config{Method: auth.Password, AuthURL: "http://k/v3", Username: "u", Password: "p", ProjectID: "x",
			Interface: "private"}, `auth.interface "private"`},
		{auth.Config{Method: auth.Password, AuthURL: "http://k/v3", Username: "u", Password: "p", ProjectID: "x",
			CACert: "/nonexistent/ca.pem"}, "auth.cacert"},
	}
	for _, c := range cases {
		if err := c.cfg.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestCloudsYAML(t *testing.T) {
	ks := keystone(t)
	ks.AddService("placement", "http://placement.example/")
	dir := t.TempDir()
	file := filepath.Join(dir, "clouds.yaml")
	yaml := `clouds:
  prod:
    auth:
      auth_url: ` + ks.AuthURL() + `
      username: ` + keystonetest.User + `
      password: ` + keystonetest.Password + `
      user_domain_name: Default
      project_name: ` + keystonetest.Project + `
      project_domain_name: Default
    region_name: RegionOne
    interface: internal
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, auth.Config{Method: auth.Cloud, Cloud: "prod", CloudsFile: file})
	if got, err := s.Endpoint("placement"); err != nil || got != "http://placement.example/" {
		t.Fatalf("endpoint %q, %v", got, err)
	}
	_, err := auth.Open(context.Background(), auth.Config{Method: auth.Cloud, Cloud: "staging", CloudsFile: file})
	if err == nil || !strings.Contains(err.Error(), `cloud "staging" not found`) {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvironment(t *testing.T) {
	ks := keystone(t)
	env := map[string]string{
		"OS_AUTH_URL": ks.AuthURL(), "OS_USERNAME": keystonetest.User, "OS_PASSWORD": keystonetest.Password,
		"OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": keystonetest.Project, "OS_PROJECT_DOMAIN_NAME": "Default",
		"OS_INTERFACE": "internal", "OS_REGION_NAME": keystonetest.Region,
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	s := open(t, auth.Config{Method: auth.Env})
	if s.Method() != auth.Password {
		t.Fatalf("method %s", s.Method())
	}
	c := auth.FromEnv(func(k string) string {
		return map[string]string{"OS_AUTH_URL": "http://k/v3", "OS_AUTH_TYPE": "v3applicationcredential",
			"OS_APPLICATION_CREDENTIAL_ID": "id", "OS_APPLICATION_CREDENTIAL_SECRET": "s"}[k]
	})
	if c.Method != auth.ApplicationCredential || c.ApplicationCredentialID != "id" {
		t.Fatalf("%+v", c)
	}
	if c := auth.FromEnv(func(k string) string { return map[string]string{"OS_CLOUD": "prod"}[k] }); c.Method != auth.Cloud {
		t.Fatalf("%+v", c)
	}
	t.Setenv("OS_AUTH_URL", "")
	if err := (auth.Config{Method: auth.Env}).Check(); err == nil || !strings.Contains(err.Error(), "neither OS_CLOUD nor OS_AUTH_URL") {
		t.Fatalf("err = %v", err)
	}
}

// A token inside the refresh window is replaced before use, by the
// plugin header and by Placement requests alike; a fresh one is kept.
func TestTokenIsRefreshedBeforeExpiry(t *testing.T) {
	ks := keystone(t)
	ks.AgeNext(50 * time.Minute) // the first token (1 h) is already inside the window
	cfg := passwordConfig(ks)
	cfg.RefreshBefore = 15 * time.Minute
	s := open(t, cfg)
	first := ks.Issued()[0].Token

	_, value := s.Header("baremetal")
	issued := ks.Issued()
	if len(issued) != 2 || value != issued[1].Token || value == first {
		t.Fatalf("header token %q after %d issues; want the second token", value, len(issued))
	}
	for range 3 {
		s.Header("baremetal")
	}
	if n := len(ks.Issued()); n != 2 {
		t.Fatalf("%d tokens issued; a token outside the window must be kept", n)
	}
}

// Placement found through the catalog, guarded by the token: expiry is
// handled before the request, revocation by one re-auth on the 401.
func TestPlacementThroughTheCatalogSurvivesExpiryAndRevocation(t *testing.T) {
	ks := keystone(t)
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	ks.Mount("placement", "placement", fake)
	ks.AgeNext(50 * time.Minute)
	cfg := passwordConfig(ks)
	cfg.RefreshBefore = 15 * time.Minute
	s := open(t, cfg)

	endpoint, err := s.Endpoint("placement")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pc, err := placement.New(ctx, placement.Config{Endpoint: endpoint, Provider: s.Provider()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ks.Issued()); n != 2 {
		t.Fatalf("%d tokens issued; the expiring one must be replaced before the first request", n)
	}
	if ks.Rejected() != 0 {
		t.Fatalf("%d requests refused with a live token", ks.Rejected())
	}
	ks.Revoke()
	if _, err := pc.ListProviders(ctx, url.Values{}); err != nil {
		t.Fatalf("after revocation: %v", err)
	}
	if ks.Rejected() != 1 || len(ks.Issued()) != 3 {
		t.Fatalf("rejected %d, issued %d; want one 401 then one re-auth", ks.Rejected(), len(ks.Issued()))
	}
	if _, v := s.Header("baremetal"); v != ks.Issued()[2].Token {
		t.Fatal("plugin header does not carry the re-issued token")
	}
}

func TestNoAuth(t *testing.T) {
	s := open(t, auth.Config{})
	if name, _ := s.Header("baremetal"); name != "" || s.Provider() != nil {
		t.Fatal("noauth must add no header and have no provider")
	}
	if _, err := s.Services(map[string]string{"baremetal": "catalog"}); err == nil ||
		!strings.Contains(err.Error(), "needs Keystone auth") {
		t.Fatalf("err = %v", err)
	}
}
