package ops_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// chromium finds a headless-capable Chromium, installing Debian's package
// with scripts/chromium/install.sh if none is on the PATH. Without one the
// test skips, unless RPENGINE_REQUIRE_E2E=1 makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RPENGINE_CHROMIUM"); p != "" {
		return p
	}
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if !testing.Short() {
		script := filepath.Join(plugintest.RepoRoot(t), "scripts", "chromium", "install.sh")
		out, err := exec.Command(script).CombinedOutput()
		if p := find(); p != "" {
			return p
		}
		t.Logf("chromium install failed: %v\n%s", err, out)
	}
	if os.Getenv("RPENGINE_REQUIRE_E2E") == "1" {
		t.Fatal("chromium is missing and RPENGINE_REQUIRE_E2E=1")
	}
	t.Skip("chromium not available (run scripts/chromium/install.sh as root)")
	return ""
}

// headless runs Chromium as the machine notes require: no sandbox (root),
// no GPU, and none of the background traffic a closed network refuses.
func headless(ctx context.Context, bin, profile string, args ...string) *exec.Cmd {
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + profile}
	return exec.CommandContext(ctx, bin, append(base, args...)...)
}

// The status page, as a browser builds it, shows the engine's state.
func TestStatusPageInChromiumE2E(t *testing.T) {
	bin := chromium(t)
	r, reps := pageRun(t)
	srv := httptest.NewServer(r.ops.Handler())
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := headless(ctx, bin, t.TempDir(), "--dump-dom", srv.URL+"/").Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	checkPage(t, string(out), reps)

	// A picture for a human: RPENGINE_SCREENSHOT=page.png keeps one.
	if shot := os.Getenv("RPENGINE_SCREENSHOT"); shot != "" {
		abs, _ := filepath.Abs(shot)
		if err := headless(ctx, bin, t.TempDir(), "--screenshot="+abs, "--window-size=1100,900", srv.URL+"/").Run(); err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
}

// dumpDOM loads url in Chromium and returns the DOM it built.
func dumpDOM(t *testing.T, ctx context.Context, bin, url string) string {
	t.Helper()
	out, err := headless(ctx, bin, t.TempDir(), "--dump-dom", url).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	return string(out)
}

// The node table's filters and the node detail, as a browser shows them:
// each filter is the URL the page's form submits (method GET).
func TestNodeFiltersInChromiumE2E(t *testing.T) {
	bin := chromium(t)
	r := nodesRun(t)
	srv := httptest.NewServer(r.ops.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	page := dumpDOM(t, ctx, bin, srv.URL+"/")
	if !strings.Contains(page, `<form class="filters" id="filters" method="get" action="/">`) || len(rowsOf(page)) != 8 {
		t.Fatalf("no filter form or not 8 rows:\n%s", page)
	}
	for _, i := range []int{0, 2, 4, 5, 8} { // each filter once; every case runs in TestNodeTableFilters
		c := filterCases[i]
		html := dumpDOM(t, ctx, bin, srv.URL+"/?"+c.query)
		if got := strings.Join(rowsOf(html), ","); got != c.want {
			t.Errorf("?%s: rows %q, want %q", c.query, got, c.want)
		}
	}
	detail := dumpDOM(t, ctx, bin, srv.URL+"/node/"+nodeUUID(3))
	for _, s := range []string{`<strong id="state" class="bad">maintenance</strong>`, `data-reserved="1"`, `data-op="set_inventories"`} {
		if !strings.Contains(detail, s) {
			t.Errorf("node detail lacks %q:\n%s", s, detail)
		}
	}
	// Pictures for a human: RPENGINE_SCREENSHOT_DIR=dir keeps three.
	if dir := os.Getenv("RPENGINE_SCREENSHOT_DIR"); dir != "" {
		for name, path := range map[string]string{"status.png": "/", "filtered.png": "/?state=quarantined",
			"node.png": "/node/" + nodeUUID(3)} {
			abs, _ := filepath.Abs(filepath.Join(dir, name))
			if err := headless(ctx, bin, t.TempDir(), "--screenshot="+abs, "--window-size=1200,1400", srv.URL+path).Run(); err != nil {
				t.Errorf("screenshot %s: %v", name, err)
			}
		}
	}
}
