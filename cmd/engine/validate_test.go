package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// closedAddr is a loopback address nothing listens on: Placement down.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// validate lists every offline problem (three config keys, the plugin's
// own config, the state path) with Placement down, before the problem
// of Placement itself; exit 2 since the config is wrong.
func TestValidateListsEveryProblemWithPlacementDown(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state-is-a-dir")
	os.Mkdir(stateDir, 0o755)
	text := fmt.Sprintf(`[engine]
id = "az-1.rack/a"
interval = "-5s"
state_file = %q
[placement]
endpoint = "http://%s"
token = "admin"
tokn = "typo"
[plugin]
path = %q
cache_dir = %q
[plugin.config]
nodes = -1
`, stateDir, closedAddr(t), plugintest.Build(t, "plugins/fake"), plugintest.CacheDir())
	path := filepath.Join(dir, "bad.toml")
	os.WriteFile(path, []byte(text), 0o644)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--config", path}, &out, &errb)
	stderr := errb.String()
	want := []string{
		"error: unknown key(s): placement.tokn",
		`error: engine.id "az-1.rack/a": '/' not allowed`,
		"error: engine.interval: must be positive",
		"fake plugin config: nodes = -1",
		"engine.state_file " + stateDir + " is a directory",
		"placement", // down: named last
		"engine validate: 6 problem(s) found, 3 in the config",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(stderr[at:], w)
		if i < 0 {
			t.Fatalf("stderr does not say %q after offset %d:\n%s", w, at, stderr)
		}
		at += i + len(w)
	}
	if code != 2 || strings.Count(stderr, "error: ") != 6 {
		t.Fatalf("exit %d, %d error lines; want 2 and 6\n%s\n%s", code, strings.Count(stderr, "error: "), out.String(), stderr)
	}
}

// A clean config with Placement up: every check ok, exit 0, nothing on
// stderr; the state path's check says where it would be written.
func TestValidateCleanConfig(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	path := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--config", path}, &out, &errb)
	if code != 0 || errb.Len() > 0 || !strings.Contains(out.String(), "state.json can be written") ||
		!strings.Contains(out.String(), `ok    plugin "fake"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// validate says what server.listen serves: plain HTTP without auth named
// as such, and a web config without TLS refused, named.
func TestValidateSaysWhatTheEndpointHas(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	web := filepath.Join(dir, "web.yml")
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	os.WriteFile(web, []byte("basic_auth_users:\n  ops: "+string(hash)+"\n"), 0o600)
	path := daemonConfig(t, dir, fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	plain, _ := os.ReadFile(path)
	for _, c := range []struct{ text, want string }{
		{string(plain), "note  server.listen serves plain HTTP, no authentication"},
		{strings.Replace(string(plain), "[server]\n", fmt.Sprintf("[server]\nweb_config_file = %q\n", web), 1),
			"error: server.web_config_file: " + web + ": no tls_server_config certificate"},
	} {
		os.WriteFile(path, []byte(c.text), 0o600)
		var out bytes.Buffer
		run(context.Background(), []string{"validate", "--config", path}, &out, &out)
		if !strings.Contains(out.String(), c.want) || strings.Count(out.String(), "no tls_server_config") > 1 {
			t.Errorf("no %q in:\n%s", c.want, out.String())
		}
	}
}
