package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/promrules"
)

// Observe mode writes nothing, ever, and reports the drift by kind: on
// an empty Placement every node's provider is missing; after a run
// wrote them and an operator unreserved one node, that node is the one
// drift; the drifts' age grows while they last.
func TestObserveModeWritesNothingAndReportsDrift(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	placementTOML := fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL())
	writes := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method != "GET" {
				n++
			}
		}
		return n
	}
	cfgObserve := daemonConfig(t, t.TempDir(), placementTOML, "")
	b, _ := os.ReadFile(cfgObserve)
	os.WriteFile(cfgObserve, []byte(strings.Replace(string(b), `interval = "20ms"`, "interval = \"20ms\"\nmode = \"observe\"", 1)), 0o644)
	d := startDaemon(t, cfgObserve)
	d.waitFor("three observe cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 3 })
	if n := writes(); n != 0 {
		t.Fatalf("observe mode sent %d writes to Placement", n)
	}
	if got := d.metric(`rpengine_drift_nodes{kind="no_provider"}`); got != 12 {
		t.Fatalf("drift no_provider %v on an empty Placement, want 12", got)
	}
	d.stop()

	run := startDaemon(t, daemonConfig(t, t.TempDir(), placementTOML, ""))
	run.waitFor("the providers written", func() bool { return len(fake.ProviderUUIDs()) == 12 })
	run.stop()
	var planted string
	for _, u := range fake.ProviderUUIDs() {
		if p, _ := fake.Provider(u); planted == "" {
			for class, inv := range p.Inventories {
				if inv.Reserved == 0 {
					planted = u
					if err := fake.SetReserved(u, class, 1); err != nil {
						t.Fatal(err)
					}
				}
				break
			}
		}
	}
	fake.ResetRequests()
	d = startDaemon(t, cfgObserve)
	d.waitFor("three observe cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 3 })
	if n := writes(); n != 0 {
		t.Fatalf("observe mode sent %d writes to Placement", n)
	}
	if got, missing := d.metric(`rpengine_drift_nodes{kind="reserved"}`), d.metric(`rpengine_drift_nodes{kind="no_provider"}`); got != 1 || missing != 0 {
		t.Fatalf("drift: reserved %v, no_provider %v; want 1 (the planted node) and 0", got, missing)
	}
	if !strings.Contains(d.logs.String(), planted+" reserved since") {
		t.Errorf("the log does not name the planted drift of %s", planted)
	}
	if d.metric("rpengine_drift_oldest_seconds") <= 0 {
		t.Errorf("oldest drift %v s, want it growing", d.metric("rpengine_drift_oldest_seconds"))
	}
	observeDriftShown(t, d, cfgObserve, planted)
	// The alert fires on the series the engine exposes, if the drift lasts.
	scraped, err := promrules.Scrape("http://"+d.addr+"/metrics", "rpengine_drift_")
	if err != nil {
		t.Fatal(err)
	}
	promrules.Test(t, promrules.Lasting(promrules.Rules(t), scraped, []string{"rpengine_drift_oldest_seconds"}, "RpengineDriftLasting"))
}

// run --observe is engine.mode = "observe" over a file that says "run":
// nothing written, every node's provider reported missing; the config
// read again (a reload) stays in observe mode.
func TestRunObserveFlagOverridesTheFile(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	cfg := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	d := startDaemon(t, cfg, "--observe")
	d.waitFor("three observe cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 3 })
	for _, r := range fake.Requests() {
		if r.Method != "GET" {
			t.Fatalf("run --observe sent %s %s to Placement", r.Method, r.Path)
		}
	}
	if got := d.metric(`rpengine_drift_nodes{kind="no_provider"}`); got != 12 {
		t.Fatalf("drift no_provider %v on an empty Placement, want 12", got)
	}
	// Capacity and the node table come from observe mode's cycles too.
	capacity, err := promrules.Scrape("http://"+d.addr+"/metrics", "rpengine_capacity_nodes{")
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, s := range capacity {
		sum += s.Value
	}
	if sum != 12 {
		t.Errorf("rpengine_capacity_nodes sums to %v in observe mode, want the 12 nodes", sum)
	}
	resp, err := http.Get("http://" + d.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `<table id="capacity">`) || !strings.Contains(string(page), `data-total="12"`) {
		t.Errorf("the status page in observe mode lacks the capacity table or the 12 nodes' table")
	}
	d.stop()
	for _, observe := range []bool{false, true} {
		c, err := loadRunConfig(cfg, observe)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{false: "run", true: "observe"}[observe]; c.Engine.Mode != want {
			t.Errorf("loadRunConfig(observe=%v): mode %q, want %q", observe, c.Engine.Mode, want)
		}
	}
}

// Beside nova-compute before a migration, observe mode compares nova's
// providers (no owner marker) with the rules: the marker a run would add
// is not drift; a provider named as a node the source does not list
// (nova's provider of a deleted node) is no_node drift; a provider not
// named as a node (a hypervisor's) is not looked at.
func TestObserveModeOverNovasProviders(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	placementTOML := fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL())
	run := startDaemon(t, daemonConfig(t, t.TempDir(), placementTOML, ""))
	run.waitFor("the providers written", func() bool { return len(fake.ProviderUUIDs()) == 12 })
	run.stop()
	for _, u := range fake.ProviderUUIDs() { // as nova writes them: no marker
		p, _ := fake.Provider(u)
		for _, tr := range p.Traits {
			if strings.HasPrefix(tr, "CUSTOM_RPENGINE_OWNER_") {
				if err := fake.RemoveTrait(u, tr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	const gone, host = "0dead000-0000-4000-8000-000000000001", "0c0ffee0-0000-4000-8000-000000000002"
	if err := fake.CreateProvider(gone, gone); err != nil {
		t.Fatal(err)
	}
	if err := fake.CreateProvider(host, "compute-1.example"); err != nil {
		t.Fatal(err)
	}
	fake.ResetRequests()
	cfg := daemonConfig(t, t.TempDir(), placementTOML, "")
	d := startDaemon(t, cfg, "--observe")
	d.waitFor("three observe cycles", func() bool { return d.metric(`rpengine_cycles_total{outcome="ok"}`) >= 3 })
	for _, r := range fake.Requests() {
		if r.Method != "GET" {
			t.Fatalf("observe mode sent %s %s to Placement", r.Method, r.Path)
		}
	}
	for _, kind := range driftKinds {
		want := map[string]float64{driftNoNode: 1}[kind]
		if got := d.metric(`rpengine_drift_nodes{kind="` + kind + `"}`); got != want {
			t.Errorf("drift %s: %v, want %v", kind, got, want)
		}
	}
	if !strings.Contains(d.logs.String(), gone+" no_node since") {
		t.Errorf("the log does not name the provider of the deleted node %s", gone)
	}
	auditObserving(t, cfg, gone)
}

// auditObserving checks engine audit in observe mode finds what observe
// mode reports over nova's providers: the one provider of a deleted
// node, not the marks a run would add.
func auditObserving(t *testing.T, cfg, gone string) {
	t.Helper()
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `interval = "20ms"`, "interval = \"20ms\"\nmode = \"observe\"", 1)), 0o644)
	var out bytes.Buffer
	code := run(context.Background(), []string{"audit", "--json", "--config", cfg}, &out, io.Discard)
	var rep auditReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("audit --json (exit %d): %v: %s", code, err, out.String())
	}
	if code != 3 || len(rep.Findings) != 1 || rep.Findings[0].Kind != driftNoNode || rep.Findings[0].Node != gone {
		t.Fatalf("audit in observe mode: exit %d, findings %+v; want 3 and %s no_node alone", code, rep.Findings, gone)
	}
}

// observeDriftShown checks the planted drift is on the status page's
// observe table and in engine explain, with its start.
func observeDriftShown(t *testing.T, d *runningDaemon, cfg, planted string) {
	t.Helper()
	resp, err := http.Get("http://" + d.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `<tr data-node="`+planted+`" data-kind="reserved">`) ||
		!strings.Contains(string(page), `<table id="observe-drift" data-total="1">`) {
		t.Errorf("the status page's observe table does not show %s's reserved drift alone", planted)
	}
	b, _ := os.ReadFile(cfg) // explain asks the daemon where it listens
	os.WriteFile(cfg, []byte(strings.Replace(string(b), `listen = "127.0.0.1:0"`, `listen = "`+d.addr+`"`, 1)), 0o644)
	var out bytes.Buffer
	run(context.Background(), []string{"explain", planted, "--config", cfg}, &out, io.Discard)
	if !strings.Contains(out.String(), "observe mode: drift reserved since ") {
		t.Errorf("engine explain does not show the drift and its start:\n%s", out.String())
	}
}
