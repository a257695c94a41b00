package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// The real Placement restarted with an empty database under a running
// daemon: its providers, its custom class and traits, the owner marker
// are all gone. With no restart of the engine, the cycles after the reset
// converge in at most 2 (every provider back with its class, reservation
// and traits) and report no error after that.
func TestPlacementResetEmptyIsHealedE2E(t *testing.T) {
	placementtest.Shared(t) // skips (or fails under RPENGINE_REQUIRE_E2E) without Placement
	if os.Getenv(placementtest.EnvURL) != "" {
		t.Skip(placementtest.EnvURL + " is set: this test restarts a Placement it starts")
	}
	dir := t.TempDir()
	p, err := placementtest.Launch(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	u, _ := url.Parse(p.URL)
	port, _ := strconv.Atoi(u.Port())
	id := func(i int) string { return uuidFor(t.Name(), i) }
	nodes := []worldNode{
		{uuid: id(0), rc: "reset-gpu", power: "power off", provision: "available", traits: []string{"CUSTOM_RESET_FAST"}},
		{uuid: id(1), rc: "reset-gpu", power: "power off", provision: "available", maintenance: true},
		{uuid: id(2), rc: "reset-gold", power: "power off", provision: "available"},
	}
	addr := freeAddr(t)
	cfg := writeConfig(t, "reset", p.URL, plugintest.Build(t, "plugins/fake"),
		"\n[server]\nlisten = \""+addr+"\"\n\n"+worldTOML(nodes, nil))
	text, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(text), `interval = "5s"`, `interval = "1h"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, logs := startDaemon(t, cfg)
	first := waitCycles(t, addr, 1, logs)
	if r := resetReport(t, addr); len(r.Errors) > 0 || r.Created != 3 {
		t.Fatalf("first cycle: created %d, errors %v", r.Created, r.Errors)
	}

	p.Stop()
	if err := os.Remove(filepath.Join(dir, placementtest.DatabaseFile)); err != nil {
		t.Fatal(err)
	}
	if p, err = placementtest.Launch(dir, port); err != nil {
		t.Fatalf("restart Placement empty on port %d: %v", port, err)
	}
	for i := 1; i <= 3; i++ {
		askCycle(t, addr)
		waitCycles(t, addr, first.Cycles+i, logs)
		r := resetReport(t, addr)
		t.Logf("cycle %d after the reset: created %d, updated %d, unchanged %d, errors %v", i, r.Created, r.Updated, r.Unchanged, r.Errors)
		// Two cycles write all; the third finds nothing to do; no error
		// from the second on.
		if i >= 2 && len(r.Errors) > 0 || i == 3 && (r.Created+r.Updated != 0 || r.Unchanged != 3) {
			t.Fatalf("not converged in 2 cycles after the reset, cycle %d:\n%s", i, tail(logs.String(), 3000))
		}
	}
	var inv struct {
		Inventories map[string]struct{ Total, Reserved int64 } `json:"inventories"`
	}
	placementGet(t, p.URL, "/resource_providers/"+id(1)+"/inventories", &inv)
	if inv.Inventories["CUSTOM_RESET_GPU"].Reserved != 1 {
		t.Errorf("the node in maintenance after the reset: %+v", inv)
	}
	var tr struct{ Traits []string }
	placementGet(t, p.URL, "/resource_providers/"+id(0)+"/traits", &tr)
	if !strings.Contains(strings.Join(tr.Traits, ","), "CUSTOM_RESET_FAST") {
		t.Errorf("the custom trait after the reset: %v", tr.Traits)
	}
}

// resetReport is the daemon's last report.
func resetReport(t *testing.T, addr string) reportCounts {
	t.Helper()
	code, body := get(t, "http://"+addr+"/api/v1/report")
	var last struct {
		Report *reportCounts `json:"report"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &last) != nil || last.Report == nil {
		t.Fatalf("GET /api/v1/report: %d %s", code, body)
	}
	return *last.Report
}

type reportCounts struct {
	Created, Updated, Unchanged int
	Errors                      []struct{ Message string }
}

// askCycle asks the daemon for a cycle now.
func askCycle(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/v1/cycle", "", nil)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /api/v1/cycle: %v %v", err, resp)
	}
	resp.Body.Close()
}

// The real Placement restored from a backup taken before the engine's
// last writes (every provider generations behind, one node's reservation
// undone): with no restart of the engine, converged in at most 2 cycles
// and no error after.
func TestPlacementRestoredFromOldBackupIsHealedE2E(t *testing.T) {
	placementtest.Shared(t)
	if os.Getenv(placementtest.EnvURL) != "" {
		t.Skip(placementtest.EnvURL + " is set: this test restarts a Placement it starts")
	}
	dir := t.TempDir()
	p, err := placementtest.Launch(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	u, _ := url.Parse(p.URL)
	port, _ := strconv.Atoi(u.Port())
	id := func(i int) string { return uuidFor(t.Name(), i) }
	nodes := []worldNode{
		{uuid: id(0), rc: "backup-gpu", power: "power off", provision: "available", traits: []string{"CUSTOM_BACKUP_T"}},
		{uuid: id(1), rc: "backup-gpu", power: "power off", provision: "available"},
	}
	addr := freeAddr(t)
	plugin := plugintest.Build(t, "plugins/fake")
	write := func() string {
		cfg := writeConfig(t, "backup", p.URL, plugin, "\n[server]\nlisten = \""+addr+"\"\n\n"+worldTOML(nodes, nil))
		text, _ := os.ReadFile(cfg)
		return strings.Replace(string(text), `interval = "5s"`, `interval = "1h"`, 1)
	}
	cfg := writeConfig(t, "backup", p.URL, plugin, "")
	os.WriteFile(cfg, []byte(write()), 0o644)
	daemon, logs := startDaemon(t, cfg)
	first := waitCycles(t, addr, 1, logs)

	// The backup: taken with Placement stopped, as a file copy.
	p.Stop()
	db := filepath.Join(dir, placementtest.DatabaseFile)
	backup, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = placementtest.Launch(dir, port); err != nil {
		t.Fatal(err)
	}
	// After it, node 1 goes into maintenance: the engine writes it.
	nodes[1].maintenance = true
	os.WriteFile(cfg, []byte(write()), 0o644)
	daemon.Process.Signal(syscall.SIGHUP)
	waitCycles(t, addr, first.Cycles+1, logs)
	if r := resetReport(t, addr); len(r.Errors) > 0 || r.Updated != 1 {
		t.Fatalf("the cycle after the backup: updated %d, errors %v", r.Updated, r.Errors)
	}
	done := first.Cycles + 1

	// Restored: node 1's reservation and every generation are as before.
	p.Stop()
	if err := os.WriteFile(db, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err = placementtest.Launch(dir, port); err != nil {
		t.Fatalf("restart Placement from the backup: %v", err)
	}
	for i := 1; i <= 3; i++ {
		askCycle(t, addr)
		waitCycles(t, addr, done+i, logs)
		r := resetReport(t, addr)
		t.Logf("cycle %d after the restore: created %d, updated %d, unchanged %d, errors %v", i, r.Created, r.Updated, r.Unchanged, r.Errors)
		if i >= 2 && len(r.Errors) > 0 || i == 3 && (r.Created+r.Updated != 0 || r.Unchanged != 2) {
			t.Fatalf("not converged in 2 cycles after the restore, cycle %d:\n%s", i, tail(logs.String(), 3000))
		}
	}
	var inv struct {
		Inventories map[string]struct{ Total, Reserved int64 } `json:"inventories"`
	}
	placementGet(t, p.URL, "/resource_providers/"+id(1)+"/inventories", &inv)
	if inv.Inventories["CUSTOM_BACKUP_GPU"].Reserved != 1 {
		t.Errorf("the node in maintenance after the restore: %+v", inv)
	}
}
