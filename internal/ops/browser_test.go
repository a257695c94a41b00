package ops_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/plugintest"
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
