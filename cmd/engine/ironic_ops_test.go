package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpengine/rpengine/internal/auth/keystonetest"
	"github.com/rpengine/rpengine/internal/ironictest"
	"github.com/rpengine/rpengine/internal/placementfake"
	"github.com/rpengine/rpengine/internal/plugintest"
)

// The Ironic plugin behind Keystone: the catalog names the baremetal
// endpoint, a token-checking proxy stands before the real Ironic, and the
// host adds the token to every plugin call (the plugin cannot: the gate
// strips credential headers). One cycle writes every node.
func TestKeystoneGuardsIronicForThePluginE2E(t *testing.T) {
	ironicURL := ironictest.StartReal(t)
	ic := ironictest.NewClient(t, ironicURL)
	var uuids []string
	for i := range 3 {
		u := ic.Create(t, ironictest.Spec{Name: fmt.Sprintf("ks-%d", i), ResourceClass: "gold"})
		ic.Available(t, u)
		uuids = append(uuids, u)
	}

	ks := keystonetest.New()
	defer ks.Close()
	fake := placementfake.New()
	defer fake.Close()
	ks.Mount("placement", "placement", fake)
	target, _ := url.Parse(ironicURL)
	ks.Mount("baremetal", "baremetal", httputil.NewSingleHostReverseProxy(target))

	dir := t.TempDir()
	text := fmt.Sprintf(`[engine]
id = "ks-ironic"
state_file = "state.json"
[plugin]
path = %q
cache_dir = %q
%s`, plugintest.Build(t, "plugins/ironic"), plugintest.CacheDir(), keystoneTOML(ks, keystonetest.Password))
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"once", "--config", cfg, "--json"}, &out, &errb)
	var rep struct {
		Created int      `json:"created"`
		Errors  []string `json:"errors"`
	}
	json.Unmarshal(out.Bytes(), &rep)
	if code != 0 || rep.Created != len(uuids) {
		t.Fatalf("once: exit %d, report %+v\n%s", code, rep, errb.String())
	}
	for _, u := range uuids {
		if _, ok := fake.Provider(u); !ok {
			t.Errorf("no provider for node %s", u)
		}
	}
	if ks.Rejected() != 0 {
		t.Fatalf("%d requests reached a guarded service without a live token", ks.Rejected())
	}
}
