package placementtest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRealKeepsDataPastRecycle proves the test Placement keeps its data
// when oslo.db recycles its database connection (after an hour by
// default: the demo's Placement answered 500 "no such table" from then on
// while its database was in memory). The recycle time is made 1 s, so the
// test waits 2.5 s of the server's own clock instead of an hour; then
// the provider made before the recycle must still be listed, and the
// server must still write. Then a restart in the same directory keeps
// the data too.
func TestRealKeepsDataPastRecycle(t *testing.T) {
	t.Parallel()
	skipShort(t)
	requireInstalled(t)
	dir := t.TempDir()
	p, err := launchConf(dir, 0, "connection_recycle_time = 1\n")
	if err != nil {
		t.Fatalf("start placement: %v", err)
	}
	t.Cleanup(p.Stop) // Stop twice is harmless
	c := newClient(p.URL)
	name := uniq(8)
	c.do(t, "POST", "/resource_providers", map[string]any{"name": name}).expect(t, http.StatusOK)
	// The server's connection recycle is its own clock: there is no
	// faking it from here, only making it short.
	time.Sleep(2500 * time.Millisecond)
	mustList(t, c, name)
	c.do(t, "POST", "/resource_providers", map[string]any{"name": uniq(8)}).expect(t, http.StatusOK)
	if _, err := os.Stat(filepath.Join(dir, DatabaseFile)); err != nil {
		t.Fatalf("the database is not the file in the instance's directory: %v", err)
	}
	p.Stop()
	p, err = launchConf(dir, 0, "")
	if err != nil {
		t.Fatalf("restart placement: %v", err)
	}
	t.Cleanup(p.Stop)
	mustList(t, newClient(p.URL), name)
}

// mustList fails unless GET /resource_providers?name=NAME answers 200 with
// one provider.
func mustList(t *testing.T, c *client, name string) {
	t.Helper()
	r := c.do(t, "GET", "/resource_providers?name="+name, nil).expect(t, http.StatusOK)
	rps, _ := r.object(t)["resource_providers"].([]any)
	if len(rps) != 1 {
		t.Fatalf("provider %s: %d listed after the recycle, want 1: %s", name, len(rps), r.body)
	}
}
