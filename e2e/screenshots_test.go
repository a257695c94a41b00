package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// shotNode is one node of the screenshots' fleet, as the fake plugin
// reports it.
type shotNode struct{ uuid, name, provision, power, instance, trait string }

func shotTOML(ns []shotNode) string {
	var b strings.Builder
	b.WriteString("[plugin.config]\n")
	for _, n := range ns {
		fmt.Fprintf(&b, "[[plugin.config.node]]\nuuid = %q\nname = %q\nresource_class = \"baremetal-gold\"\n"+
			"power_state = %q\nprovision_state = %q\ntraits = [%q]\n", n.uuid, n.name, n.power, n.provision, n.trait)
		if n.instance != "" {
			fmt.Fprintf(&b, "instance_uuid = %q\n", n.instance)
		}
	}
	return b.String()
}

// TestScreenshots regenerates docs/screenshots (make screenshots): the
// status page's node pages of three nodes that are not schedulable, as
// PNGs from headless Chromium, and `engine explain` of the same nodes as
// text, against the real Placement. It runs only when
// RPENGINE_SCREENSHOTS names the directory to write, and checks that the
// pages and the text say the values that decide each node.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("RPENGINE_SCREENSHOTS")
	if dir == "" {
		t.Skip("RPENGINE_SCREENSHOTS is not set (make screenshots sets it)")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is missing: run scripts/chromium/install.sh")
	}
	url := placementtest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor("screenshots", i) }
	ns := []shotNode{
		{u(1), "rack1-n01", "available", "power off", "", "CUSTOM_GOLD"},
		{u(2), "rack1-n02", "available", "power off", "", "CUSTOM_GOLD"},
		{u(3), "rack1-n03", "available", "power off", "", "CUSTOM_GOLD"},
		{u(4), "rack1-n04", "available", "power off", "", "CUSTOM_GOLD"},
	}
	listen := freeAddr(t)
	id := "az1-rack1"
	server := fmt.Sprintf("\n[server]\nlisten = %q\n", listen)
	cfg := writeConfig(t, id, url, plugin, shotTOML(ns)+server)
	once(t, cfg)
	instance := u(103) // nova's claim on n03, before Ironic deploys it
	plant(t, url, "PUT", "/allocations/"+instance, map[string]any{
		"allocations": map[string]any{u(3): map[string]any{"resources": map[string]int{"CUSTOM_BAREMETAL_GOLD": 1}}},
		"project_id":  "demo", "user_id": "demo", "consumer_generation": nil, "consumer_type": "INSTANCE"})

	daemon, logs := startDaemon(t, cfg)
	waitPage := func(node string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			code, body := get(t, "http://"+listen+"/node/"+node)
			if code == 200 && !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(body, w) }) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node page of %s: %d, want %q\n%s\n%s", node, code, want, body, tail(logs.String(), 3000))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitPage(u(2), "available")
	// Ironic deploys n03 and cleans n02; n04's record gains a 256-byte
	// trait (quarantined). The daemon reloads at once and reserves them.
	ns[1].provision = "cleaning"
	ns[2].provision, ns[2].power, ns[2].instance = "active", "power on", instance
	ns[3].trait = "CUSTOM_" + strings.Repeat("T", 249)
	changed, err := os.ReadFile(writeConfig(t, id, url, plugin, shotTOML(ns)+server))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	daemon.Process.Signal(syscall.SIGHUP)
	waitPage(u(2), "provision_state = cleaning", "set_inventories")
	waitPage(u(3), "in use by instance "+instance, `data-consumer="`+instance+`"`, "<td>INSTANCE</td>")
	waitPage(u(4), "255 (plugin.max_field_length)")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, shot := range []struct{ file, node string }{
		{"node-cleaning.png", u(2)}, {"node-instance.png", u(3)}, {"node-quarantined.png", u(4)},
	} {
		abs, _ := filepath.Abs(filepath.Join(dir, shot.file))
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
			"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--screenshot="+abs, "--window-size=1280,1000",
			"http://"+listen+"/node/"+shot.node)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, out)
		}
		if st, err := os.Stat(abs); err != nil || st.Size() < 10000 {
			t.Fatalf("screenshot %s: %v", abs, err)
		}
	}
	daemon.Process.Signal(syscall.SIGTERM)
	daemon.Wait()

	// explain, after the daemon stopped (it no longer needs to be).
	var text strings.Builder
	for _, n := range []struct{ name, want string }{
		{"rack1-n02", "provision_state = cleaning"},
		{"rack1-n03", "in use by instance " + instance},
		{"rack1-n04", "255 (plugin.max_field_length)"},
	} {
		res := runEngine(t, "explain", n.name, "--config", cfg)
		if res.code != 0 || !strings.Contains(res.stdout, n.want) {
			t.Fatalf("explain %s: exit %d, want %q\n%s\n%s", n.name, res.code, n.want, res.stdout, res.stderr)
		}
		fmt.Fprintf(&text, "$ engine explain %s\n%s\n", n.name, res.stdout)
	}
	if err := os.WriteFile(filepath.Join(dir, "explain.txt"), []byte(strings.TrimRight(text.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
