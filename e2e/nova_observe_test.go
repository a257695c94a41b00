package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/promrules"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// Observe mode beside the real nova 26.2.2 before a migration: nova
// alone writes its providers and the engine watches (`engine run` with
// engine.mode = "observe"). Where nova's providers match the rules there
// is no drift; five drifts planted in Placement behind nova's back (a
// maintenance node unreserved, a provider deleted, a node deleted from
// Ironic whose provider stays, a wrong class, an instance's node
// unreserved) are each reported within one cycle, by node and kind, and
// RpengineDriftLasting's promtool test, fed the scraped rpengine_drift_*
// series, fires if they last; the engine sends Placement no PUT, POST or
// DELETE across 10 cycles.
//
// `make test-nova` runs it (RPENGINE_NOVA_E2E=1), and CI does.
func TestNovaObserve(t *testing.T) {
	if os.Getenv("RPENGINE_NOVA_E2E") != "1" {
		t.Skip("RPENGINE_NOVA_E2E unset: run it with `make test-nova`")
	}
	r := newNovaRigWith(t, false, []fleetKind{{"free", 4}, {"maint", 1}, {"deploy", 1}}, "", "")
	r.startNova()
	r.novaStep("start-up", true, false)
	r.scheduleInstance(r.kinds["deploy"][0], "0b5e0000-0000-4000-8000-000000000001")
	r.novaStep("after the deployment", false, false)
	if len(r.providers()) != len(r.all()) {
		t.Fatalf("nova made %d providers for %d nodes", len(r.providers()), len(r.all()))
	}
	d := r.startObserver()
	d.cycles(t, 2)
	if n := d.driftTotal(); n != 0 {
		t.Fatalf("drift over nova's providers before anything was planted: %v nodes\n%s", n, d.tail())
	}
	planted := r.plantDrifts()
	d.cycles(t, 2) // the second began after the plant
	for kind, want := range map[string]float64{"reserved": 2, "no_provider": 1, "no_node": 1, "inventory": 1, "traits": 0, "aggregates": 0} {
		if got := d.metric(`rpengine_drift_nodes{kind="` + kind + `"}`); got != want {
			t.Errorf("drift %s: %v nodes, want %v", kind, got, want)
		}
	}
	for _, p := range planted {
		if !strings.Contains(d.tail(), p) {
			t.Errorf("the log does not name the planted drift %q", p)
		}
	}
	// The alert's promtool test, on the series the engine exposes while
	// the planted drifts last.
	scraped, err := promrules.Scrape(d.metrics, "rpengine_drift_")
	if err != nil {
		t.Fatal(err)
	}
	promrules.Test(t, promrules.Lasting(promrules.Rules(t), scraped, []string{"rpengine_drift_oldest_seconds"}, "RpengineDriftLasting"))
	d.cycles(t, 10)
	if ws := r.engW.take(); len(ws) > 0 {
		t.Fatalf("observe mode wrote to Placement: %v", ws)
	}
	t.Logf("FIGURE observe beside nova: 5 planted drifts reported within one cycle, by node and kind, RpengineDriftLasting fires on them (promtool); 0 engine writes in %v cycles", d.metric(`rpengine_cycles_total{outcome="ok"}`))
}

// plantDrifts changes Placement and Ironic behind nova's back and returns
// the drifts as the log names them ("UUID kind").
func (r *novaRig) plantDrifts() []string {
	t := r.t
	free, maint, used := r.kinds["free"], r.kinds["maint"][0], r.kinds["deploy"][0]
	r.setReserved(maint, 0)
	r.setReserved(used, 0)
	if code, b := placementDo(t, r.placement, "DELETE", "/resource_providers/"+free[0], nil); code != 204 {
		t.Fatalf("delete provider: %d %s", code, b)
	}
	r.ironic.Delete(t, free[1])
	other := map[string]string{"CUSTOM_BAREMETAL_GOLD": "CUSTOM_BAREMETAL_SILVER", "CUSTOM_BAREMETAL_SILVER": "CUSTOM_BAREMETAL_GOLD"}[r.rc[free[2]]]
	r.putInventory(free[2], other, 0)
	return []string{maint + " reserved", used + " reserved", free[0] + " no_provider", free[1] + " no_node", free[2] + " inventory"}
}

// setReserved sets the reserved count of node u's one inventory.
func (r *novaRig) setReserved(u string, reserved int) { r.putInventory(u, r.rc[u], reserved) }

// putInventory replaces node u's provider's inventory with one unit of rc.
func (r *novaRig) putInventory(u, rc string, reserved int) {
	var rp struct{ Generation int }
	placementGet(r.t, r.placement, "/resource_providers/"+u, &rp)
	body := map[string]any{"resource_provider_generation": rp.Generation, "inventories": map[string]any{
		rc: map[string]any{"total": 1, "reserved": reserved, "min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}}}
	if code, b := placementDo(r.t, r.placement, "PUT", "/resource_providers/"+u+"/inventories", body); code != 200 {
		r.t.Fatalf("plant inventory %s on %s: %d %s", rc, u, code, b)
	}
}

// observer is `engine run` in observe mode over the rig's config.
type observer struct{ metrics, logPath string }

func (r *novaRig) startObserver() *observer {
	t := r.t
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), `interval = "5s"`, "interval = \"2s\"\nmode = \"observe\"", 1) +
		fmt.Sprintf("\n[server]\nlisten = \"127.0.0.1:%d\"\n", port)
	cfg := filepath.Join(t.TempDir(), "observe.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &observer{metrics: "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics", logPath: filepath.Join(filepath.Dir(cfg), "engine.log")}
	startRun(t, cfg, d.logPath)
	return d
}

func (d *observer) metric(prefix string) float64 { return scrapeMetric(d.metrics, prefix) }

// cycles waits for n more finished cycles.
func (d *observer) cycles(t *testing.T, n int) {
	t.Helper()
	moreCycles(t, d.metrics, `rpengine_cycles_total{outcome="ok"}`, n, time.Duration(n)*5*time.Second+30*time.Second)
}

func (d *observer) driftTotal() float64 { return d.metric("rpengine_drift_nodes") }

func (d *observer) tail() string {
	b, _ := os.ReadFile(d.logPath)
	return tailString(string(b), 6000)
}
