package ops_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/ops"
)

// A web config that turns on no TLS is refused, by the start and by
// validate alike; one that does is named for what it turns on.
func TestWebSecuritySaysWhatIsOn(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tls := "tls_server_config:\n  cert_file: " + cert + "\n  key_file: " + key + "\n"
	users := "basic_auth_users:\n  prom: $2y$10$X0h9ZJd3wUq8rWf1p5vC7uVqZQe8zjz8x7M6Zq1vR2JQ3bQd0yq1K\n"
	for _, c := range []struct{ name, body, want, err string }{
		{"empty", "", "", "no tls_server_config certificate"},
		{"basic auth alone", users, "", "plain HTTP"},
		{"tls alone", tls, "TLS, no authentication", ""},
		{"tls and basic auth", tls + users, "TLS, basic auth (1 users)", ""},
		{"client certificates", tls + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + cert + "\n",
			"TLS, client certificates required", ""},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yml")
		os.WriteFile(p, []byte(c.body), 0o600)
		got, err := ops.WebSecurity(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %q, %v; want an error naming the file and %q", c.name, got, err, c.err)
			}
			if _, _, err := ops.New(nil).ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0", WebConfigFile: p}, slog.New(slog.DiscardHandler)); err == nil {
				t.Errorf("%s: served", c.name)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if got, _ := ops.WebSecurity(""); got != ops.PlainHTTP {
		t.Errorf("no file: %q", got)
	}
}
