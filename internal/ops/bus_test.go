package ops

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// The event source's state shows on the page and in /readyz's reason; a
// bus that is down leaves the engine ready (full cycles cover it).
func TestBusOnPageAndReadiness(t *testing.T) {
	o := New(nil)
	_, before := o.Ready()
	if strings.Contains(before, "events") {
		t.Fatalf("without [events] readiness mentions them: %q", before)
	}
	st := BusState{Connected: false, Since: time.Unix(1700000000, 0), LastError: "dial tcp: connection refused", Queue: "rpengine-e1"}
	o.WatchBus(func() BusState { return st })
	_, why := o.Ready()
	if !strings.Contains(why, "events: disconnected since 2023-11-14T22:13:20Z") {
		t.Fatalf("readiness reason %q", why)
	}
	rec := httptest.NewRecorder()
	o.ServeStatus(rec, httptest.NewRequest("GET", "/", nil))
	body := rec.Body.String()
	for _, want := range []string{`id="events" data-connected="false"`, "rpengine-e1", "connection refused"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	st.Connected = true
	if _, why := o.Ready(); !strings.Contains(why, "events: connected") {
		t.Fatalf("readiness reason %q", why)
	}
}

// A node sync's outcomes reach the node table at once.
func TestNodeSyncUpdatesTheTable(t *testing.T) {
	o := New(nil)
	o.Observe(engine.CycleStarted{})
	o.Observe(engine.ProviderOutcome{Outcome: engine.Outcome{Node: "n1", Kind: engine.KindUnchanged}})
	o.CycleDone(engine.Report{}, time.Now())
	if r, ok := o.Node("n1"); !ok || r.State != "schedulable" {
		t.Fatalf("after the cycle: %+v %v", r, ok)
	}
	o.Observe(engine.ProviderOutcome{Outcome: engine.Outcome{Node: "n1", Kind: engine.KindUpdated, Reserved: "maintenance"}})
	o.Observe(engine.NodesSynced{})
	if r, ok := o.Node("n1"); !ok || r.State != "maintenance" {
		t.Fatalf("after the node sync: %+v %v", r, ok)
	}
}
