package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// readmeServiceExample is the catalog grant the configuration manual's
// plugin.services row (docs/CONFIGURATION.md) gives as its example, e.g.
// `baremetal = "catalog:baremetal"`.
func readmeServiceExample(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(plugintest.RepoRoot(t), "docs", "CONFIGURATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "| `plugin.services`") {
			m := regexp.MustCompile("`([a-z_-]+ = \"catalog:[a-z_-]+\")`").FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("docs/CONFIGURATION.md's plugin.services row has no catalog:<type> example:\n%s", line)
			}
			return m[1]
		}
	}
	t.Fatal("docs/CONFIGURATION.md has no plugin.services row")
	return ""
}

// The configuration manual's example grant, as written, works with the Ironic plugin
// through a Keystone catalog: validate passes and a cycle writes the node.
// The grant the manual once gave (ironic = "catalog:baremetal") is refused
// by validate and by the load, naming the service the plugin calls.
func TestReadmeServicesExampleRunsWithIronicE2E(t *testing.T) {
	grant := readmeServiceExample(t)
	ironicURL := ironictest.StartReal(t)
	ic := ironictest.NewClient(t, ironicURL)
	u := ic.Create(t, ironictest.Spec{Name: "readme-0", ResourceClass: "gold"})
	ic.Available(t, u)

	ks, fake := keystoneCloud(t, ironicURL)

	config := func(grant string) string {
		text := fmt.Sprintf(`[engine]
id = "readme"
[auth]
method = "password"
auth_url = %q
username = %q
password = %q
user_domain_name = "Default"
project_name = %q
[plugin]
path = %q
cache_dir = %q
[plugin.services]
%s
`, ks.AuthURL(), keystonetest.User, keystonetest.Password, keystonetest.Project,
			plugintest.Build(t, "plugins/ironic"), plugintest.CacheDir(), grant)
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	good := config(grant)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"validate", "--config", good}, &out, &errb); code != 0 {
		t.Fatalf("validate with the manual's %s: exit %d\n%s%s", grant, code, out.String(), errb.String())
	}
	if want := "ok    plugin services: baremetal (type baremetal); all granted"; !strings.Contains(out.String(), want) {
		t.Errorf("validate output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	code := run(context.Background(), []string{"once", "--config", good, "--json"}, &out, &errb)
	var rep struct {
		Created int      `json:"created"`
		Errors  []string `json:"errors"`
	}
	json.Unmarshal(out.Bytes(), &rep)
	if _, ok := fake.Provider(u); code != 0 || rep.Created != 1 || !ok {
		t.Fatalf("once with the manual's %s: exit %d, report %+v\n%s", grant, code, rep, errb.String())
	}

	bad := config(`ironic = "catalog:baremetal"`)
	for _, verb := range []string{"validate", "once"} {
		out.Reset()
		errb.Reset()
		code := run(context.Background(), []string{verb, "--config", bad}, &out, &errb)
		want := `load: the plugin calls service "baremetal" (grant baremetal = "catalog" or a URL), not granted in [plugin.services] (granted: ironic)`
		if code != 1 || !strings.Contains(errb.String(), want) {
			t.Errorf("%s with ironic = \"catalog:baremetal\": exit %d, stderr %q; want 1 and %q", verb, code, errb.String(), want)
		}
	}
}

// The Ironic plugin reports a version and declares its services, both
// before configuration (inspect) and after it (services follow the config).
func TestPluginInspectIronicVersionAndServices(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "rpengine-test-xdg-cache"))
	wasm := plugintest.Build(t, "plugins/ironic")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"plugin", "inspect", wasm}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"name:          ironic\n", "version:       1.1.0\n",
		"services:      baremetal (type baremetal)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
