package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// Observe mode follows Ironic's notifications: after a run wrote the
// providers, `engine run` in observe mode with [events] reports a node
// put in maintenance as reserved drift through a node sync, with no full
// cycle meanwhile, and forgets it once maintenance is unset; the
// provider's generation never moves (nothing written).
func TestObserveFollowsNotificationsE2E(t *testing.T) {
	r := newEventRig(t)
	a := r.ironic.Create(t, ironictest.Spec{Name: "obs-a-" + r.id, ResourceClass: "baremetal"})
	r.ironic.Available(t, a)
	if res := runEngine(t, "once", "--config", r.cfg); res.code != 0 {
		t.Fatalf("once: exit %d: %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.cfg, []byte(strings.Replace(string(b), `delete_grace = "0s"`, "delete_grace = \"0s\"\nmode = \"observe\"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := r.generation(a)
	r.start()
	reserved := `rpengine_drift_nodes{kind="reserved"}`
	r.within(60*time.Second, "bus connected and the connect's full cycle done", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2
	})
	time.Sleep(4 * time.Second) // past engine.interval: from now on only events move the drift
	// Other tests' providers in the shared Placement, named as nodes this
	// Ironic lacks and owned by no live engine, are no_node drift: rightly.
	if d := r.metric("rpengine_drift_nodes") - r.metric(`rpengine_drift_nodes{kind="no_node"}`); d != 0 {
		t.Fatalf("drift %v (besides other tests' providers) after the run wrote the providers, want 0", d)
	}
	r.observedChange("maintenance set", func() { r.ironic.Maintenance(t, a, true) }, func() bool { return r.metric(reserved) == 1 })
	r.observedChange("maintenance unset", func() { r.ironic.Maintenance(t, a, false) }, func() bool { return r.metric(reserved) == 0 })
	if g := r.generation(a); g != gen || r.reserved(a) != 0 {
		t.Fatalf("provider of %s: generation %d (was %d), reserved %d: observe mode wrote", a, g, gen, r.reserved(a))
	}
}

// observedChange makes a change in Ironic and waits for the drift to show
// it, checking that a node sync did it, not a full cycle.
func (r *eventRig) observedChange(what string, change func(), done func() bool) {
	r.t.Helper()
	took := r.bySync(what, change, done)
	r.t.Logf("FIGURE observe mode: %s in the drift metric %.2f s after the Ironic call returned (full cycles every 10 min)", what, took.Seconds())
}
