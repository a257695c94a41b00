package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// statusNodes is a fleet with one node of each kind an operator asks
// about: schedulable, in maintenance, faulted, quarantined (a 256-byte
// trait).
func statusNodes(u func(int) string) string {
	long := "CUSTOM_" + strings.Repeat("T", 249)
	var b strings.Builder
	b.WriteString("[plugin.config]\n")
	for i, n := range []struct{ extra string }{{""}, {"maintenance = true\n"}, {"fault = \"power failure\"\n"}, {fmt.Sprintf("traits = [%q]\n", long)}} {
		fmt.Fprintf(&b, "[[plugin.config.node]]\nuuid = %q\nname = \"page-n%d\"\nresource_class = \"baremetal-gold\"\npower_state = \"power off\"\nprovision_state = \"available\"\n%s",
			u(i), i, n.extra)
	}
	return b.String()
}

var reWhyCell = regexp.MustCompile(`(?s)<tr class="node[^"]*" data-uuid="([0-9a-f-]+)" data-state="([a-z_]+)"( data-stale="true")?>.*?<td class="why">([^<]*)</td></tr>`)

// pageWhy reads the status page's node table: uuid -> (why, stale).
func pageWhy(t *testing.T, addr string) (page string, why map[string]string, stale int) {
	t.Helper()
	code, body := get(t, "http://"+addr+"/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	why = map[string]string{}
	for _, m := range reWhyCell.FindAllStringSubmatch(body, -1) {
		why[m[1]] = html.UnescapeString(strings.TrimSpace(m[4]))
		if m[3] != "" {
			stale++
		}
	}
	return body, why, stale
}

// The status page and `explain` tell the same truth: each node's "why"
// is explain's verdict with its value; during a Placement outage the page
// keeps the last known table (marked stale) and its header says the
// cycles are not ok. Screenshots of both go to RPENGINE_SCREENSHOTS when
// set (make screenshots), else to the test's directory.
func TestStatusPageTellsWhatExplainTellsE2E(t *testing.T) {
	placementtest.Shared(t) // skips (or fails under RPENGINE_REQUIRE_E2E) without Placement
	if os.Getenv(placementtest.EnvURL) != "" {
		t.Skip(placementtest.EnvURL + " is set: this test stops a Placement it starts")
	}
	p, err := placementtest.Launch(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	u := func(i int) string { return uuidFor(t.Name(), i) }
	addr := freeAddr(t)
	cfg := writeConfig(t, "page", p.URL, plugintest.Build(t, "plugins/fake"), "\n[server]\nlisten = \""+addr+"\"\n\n"+statusNodes(u))
	text, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(text), `interval = "5s"`, `interval = "1h"`, 1)), 0o644)
	_, logs := startDaemon(t, cfg)
	first := waitCycles(t, addr, 1, logs)

	_, why, _ := pageWhy(t, addr)
	for i, want := range []string{"", "maintenance = true", "fault = power failure", "quarantined (field_too_long)"} {
		res := runEngine(t, "explain", u(i), "--config", cfg, "-o", "json")
		var x struct{ Why struct{ Verdict string } }
		if err := json.Unmarshal([]byte(res.stdout), &x); err != nil {
			t.Fatalf("explain %s: %v\n%s\n%s", u(i), err, res.stdout, res.stderr)
		}
		got := why[u(i)]
		if want == "" && (got != "" || x.Why.Verdict != "schedulable") || want != "" && (!strings.Contains(got, want) || !strings.Contains(x.Why.Verdict, got)) {
			t.Errorf("node %d: the page's why %q, explain's verdict %q, want %q in both", i, got, x.Why.Verdict, want)
		}
	}
	shoot(t, addr, "/", "status-nodes.png")
	shoot(t, addr, "/node/"+u(3), "status-quarantined-node.png")

	// Placement goes away: the next cycles fail, the table stays.
	p.Stop()
	askCycle(t, addr)
	waitCycles(t, addr, first.Cycles+1, logs)
	page, why, stale := pageWhy(t, addr)
	if len(why) != 4 || stale < 3 {
		t.Errorf("during the outage: %d rows, %d stale, want 4, at least 3 stale: %v", len(why), stale, why)
	}
	t.Logf("during the outage: %d rows, %d stale: %v", len(why), stale, why)
	if !regexp.MustCompile(`<span id="last-outcome" data-outcome="(partial|failed)"`).MatchString(page) || !strings.Contains(page, `id="partial-cycles"`) {
		t.Errorf("during the outage the header does not say the cycles are not ok")
	}
	shoot(t, addr, "/", "status-outage.png")
	port, _ := strconv.Atoi(mustPort(t, p.URL))
	if p, err = placementtest.Launch(filepath.Dir(p.Log), port); err != nil { // same directory: its data back
		t.Fatalf("Placement back: %v", err)
	}
	askCycle(t, addr)
	waitCycles(t, addr, first.Cycles+2, logs)
	if _, why, stale := pageWhy(t, addr); len(why) != 4 || stale != 0 {
		t.Errorf("after the outage: %d rows, %d stale, want 4 and 0", len(why), stale)
	}
}

func mustPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// shoot saves a headless Chromium screenshot of the daemon's page path.
func shoot(t *testing.T, addr, path, file string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("no chromium: no screenshot of " + path + " (scripts/chromium/install.sh)")
		return
	}
	dir := os.Getenv("RPENGINE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	abs, _ := filepath.Abs(filepath.Join(dir, file))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--screenshot="+abs, "--window-size=1280,1000", "http://"+addr+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if st, err := os.Stat(abs); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", abs, err)
	}
}
