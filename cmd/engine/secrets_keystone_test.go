package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Keystone's secrets — the password, the application credential secret,
// each from its file, and every token Keystone issued — reach no
// surface: the output of every verb (with Keystone up, and refusing the
// login), the daemon's log, status page, metrics and health routes, and
// the state file.
func TestKeystoneSecretsReachNoSurface(t *testing.T) {
	const password, appSecret = "KsPassw0rdS3cret9", "KsAppCredS3cret10"
	ks := keystonetest.New()
	defer ks.Close()
	ks.SetSecrets(password, appSecret)
	fake := placementfake.New()
	defer fake.Close()
	ks.Mount("placement", "placement", fake)
	surfaces := map[string]string{}
	for _, method := range []string{"password", "application_credential"} {
		dir := t.TempDir()
		cfg := daemonConfig(t, dir, "", keystoneFileTOML(t, ks, dir, method, password, appSecret))
		for _, refuse := range []bool{false, true} {
			ks.RefuseLogins(refuse)
			for _, verb := range []string{"validate", "once", "plan", "explain"} {
				args := []string{verb, "--config", cfg}
				if verb == "explain" {
					args = append(args, "--node", "00000000-0000-4000-8000-000000000001")
				}
				var out, errb bytes.Buffer
				run(context.Background(), args, &out, &errb)
				surfaces[fmt.Sprintf("%s %s refused=%v", method, verb, refuse)] = out.String() + errb.String()
			}
		}
		ks.RefuseLogins(false)
		d := startDaemon(t, cfg)
		d.waitFor("a cycle", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 1 })
		for _, path := range []string{"/", "/metrics", "/healthz", "/readyz", "/api/v1/status"} {
			_, body := d.get(path)
			surfaces[method+" GET "+path] = body
		}
		d.stop()
		surfaces[method+" daemon log"] = d.logs.String()
		state, _ := os.ReadFile(filepath.Join(dir, "state.json"))
		surfaces[method+" state file"] = string(state)
	}
	secrets := map[string]string{"auth.password_file": password, "auth.application_credential_secret_file": appSecret}
	for i, is := range ks.Issued() {
		secrets[fmt.Sprintf("token %d (%s)", i, is.Method)] = is.Token
	}
	if len(ks.Issued()) < 2 {
		t.Fatalf("%d tokens issued: the secrets were not used", len(ks.Issued()))
	}
	for where, text := range surfaces {
		for what, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s", where, what)
			}
		}
	}
}

// keystoneFileTOML is [auth] by method, its secret in a 0600 file.
func keystoneFileTOML(t *testing.T, ks *keystonetest.Server, dir, method, password, appSecret string) string {
	t.Helper()
	file := filepath.Join(dir, "secret")
	secret, key := password, "password_file"
	who := fmt.Sprintf("username = %q\nuser_domain_name = \"Default\"\nproject_name = %q\n", keystonetest.User, keystonetest.Project)
	if method == "application_credential" {
		secret, key = appSecret, "application_credential_secret_file"
		who = fmt.Sprintf("application_credential_id = %q\n", keystonetest.AppCredID)
	}
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[auth]\nmethod = %q\nauth_url = %q\n%s%s = %q\n", method, ks.AuthURL(), who, key, file)
}
