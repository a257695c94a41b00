package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// etcd as operators secure it (TLS with client certificates, auth on, the
// engine's user holding a role on /rpengine/ alone): with the right
// certificate and role two engines divide the fleet and validate says
// what is on; with a client certificate no trusted CA signed the engine
// refuses to start, naming it. No log or output shows the password.
func TestSecuredEtcdEngines(t *testing.T) {
	s := etcdtest.StartSecure(t, "/rpengine/")
	r := &scaleRig{t: t, placement: placementtest.Shared(t), etcd: s.URL, plugin: plugintest.Build(t, "plugins/fake"),
		seed: 0x5ec0e, log: &requestLog{}, engines: map[string]*engineProc{}, ttl: 4 * time.Second}
	pw := filepath.Join(t.TempDir(), "etcd.pw")
	if err := os.WriteFile(pw, []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	access := func(cert, key string) string {
		return fmt.Sprintf("ca_file = %q\ncert_file = %q\nkey_file = %q\nuser = %q\npassword_file = %q\n", s.CA, cert, key, s.User, pw)
	}
	r.access = access(s.Cert, s.Key)
	r.desired = r.oracle()
	r.observer = r.config(r.id(0), r.placement, r.etcd, true)

	res := runEngine(t, "validate", "--config", r.observer)
	want := fmt.Sprintf("ok    etcd %s (TLS, client certificate %s, user %s): read /rpengine/", s.URL, s.Cert, s.User)
	if !strings.Contains(res.stdout, want) {
		t.Errorf("validate: exit %d, no line %q:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
	ids := []string{r.id(1), r.id(2)}
	r.start(1)
	r.start(2)
	r.waitSettled(40*time.Second, ids...)
	for _, id := range ids {
		b, _ := os.ReadFile(r.engines[id].logPath)
		if strings.Contains(string(b), s.Password) {
			t.Errorf("%s's log shows the etcd password", id)
		}
		if !strings.Contains(string(b), "TLS, client certificate "+s.Cert+", user "+s.User) {
			t.Errorf("%s's start log does not say what etcd security is on", id)
		}
	}

	r.access = access(s.OtherCert, s.OtherKey)
	bad := r.config(r.id(3), r.placement, r.etcd, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, engineBin(t), "run", "--config", bad)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil || err == nil {
		t.Fatalf("with another CA's client certificate the engine ran (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused the TLS connection") || !strings.Contains(string(out), "client certificate "+s.OtherCert) {
		t.Errorf("the refusal does not name the certificate:\n%s", out)
	}
	for _, verb := range []string{"validate", "status", "plan"} {
		if res := runEngine(t, verb, "--config", bad); res.code == 0 || !strings.Contains(res.stderr, "client certificate "+s.OtherCert) {
			t.Errorf("%s with the wrong certificate: exit %d\n%s", verb, res.code, res.stderr)
		}
	}
}
