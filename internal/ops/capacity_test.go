package ops_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// The capacity table and metric count the last cycle's nodes by class,
// state and the zone of their aggregate rule.
func TestCapacityByClassStateZone(t *testing.T) {
	r := newRig(t, 6)
	a := "rack-a"
	r.ops.Configure(ops.Info{EngineID: "test", Interval: time.Minute, UnhealthyAfter: 3, History: 10,
		Zones: engine.AggregateRules{{Zone: "az-a", ConductorGroup: &a, Aggregates: []string{"a0a0a0a0-0000-4000-8000-00000000000a"}}}})
	r.src.set(func(s *source) {
		for i := range s.nodes {
			if i < 4 {
				s.nodes[i].ConductorGroup = a
			}
		}
		s.nodes[1].Maintenance = true
		s.nodes[5].ResourceClass = "" // quarantined: no class
	})
	r.cycle()
	want := []ops.CapacityRow{
		{Class: "CUSTOM_BAREMETAL_GOLD", State: "maintenance", Zone: "az-a", Nodes: 1},
		{Class: "CUSTOM_BAREMETAL_GOLD", State: "schedulable", Zone: "az-a", Nodes: 3},
		{Class: "CUSTOM_BAREMETAL_GOLD", State: "schedulable", Zone: "none", Nodes: 1},
		{Class: "none", State: "quarantined", Zone: "none", Nodes: 1},
	}
	if got := r.ops.Capacity(); !slices.Equal(got, want) {
		t.Fatalf("capacity\n got %+v\nwant %+v", got, want)
	}
	h := r.ops.Handler()
	if v := metric(t, h, `rpengine_capacity_nodes{class="CUSTOM_BAREMETAL_GOLD",state="schedulable",zone="az-a"}`); v != 3 {
		t.Fatalf("metric %v", v)
	}
	// A node leaves maintenance: its old series goes, not left at 1.
	r.src.set(func(s *source) { s.nodes[1].Maintenance = false })
	r.cycle()
	_, body := get(t, h, "/metrics")
	if strings.Contains(body, `state="maintenance",zone="az-a"`) {
		t.Fatal("an emptied series stayed")
	}
	if v := metric(t, h, `rpengine_capacity_nodes{class="CUSTOM_BAREMETAL_GOLD",state="schedulable",zone="az-a"}`); v != 4 {
		t.Fatalf("metric after the change %v", v)
	}
	if _, page := get(t, h, "/"); !strings.Contains(page, `<table id="capacity">`) || !strings.Contains(page, "<td>az-a</td>") {
		t.Fatal("no capacity table on the status page")
	}
}
