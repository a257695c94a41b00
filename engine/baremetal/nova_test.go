package baremetal

import (
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// nova's predicate and the hold rule, row by row, against the engine's
// matrix: where the engine is stricter the node gets a hold, never a
// different reserved value.
func TestNovaReservedAndHold(t *testing.T) {
	ok := hostabi.Node{PowerState: "power on", ProvisionState: "available"}
	with := func(f func(*hostabi.Node)) hostabi.Node { n := ok; f(&n); return n }
	cases := []struct {
		name     string
		node     hostabi.Node
		instance bool // in the instance list
		skip     bool // skip_reserve_in_use_ironic_nodes
		nova     bool
		wantHold bool
		wantWhy  ReservedReason
	}{
		{"schedulable", ok, false, false, false, false, Schedulable},
		{"no provision state (NOSTATE)", with(func(n *hostabi.Node) { n.ProvisionState = "" }), false, false, false, false, Schedulable},
		{"maintenance", with(func(n *hostabi.Node) { n.Maintenance = true }), false, false, true, false, ReservedMaintenance},
		{"power unknown", with(func(n *hostabi.Node) { n.PowerState = "" }), false, false, true, false, ReservedPowerState},
		{"power error", with(func(n *hostabi.Node) { n.PowerState = "error" }), false, false, true, false, ReservedPowerState},
		{"power off is fine for both", with(func(n *hostabi.Node) { n.PowerState = "power off" }), false, false, false, false, Schedulable},
		{"active", with(func(n *hostabi.Node) { n.ProvisionState = "active" }), false, false, true, false, ReservedProvision},
		{"manageable", with(func(n *hostabi.Node) { n.ProvisionState = "manageable" }), false, false, true, false, ReservedProvision},
		{"retired, available", with(func(n *hostabi.Node) { n.Retired = true }), false, false, false, true, ReservedRetired},
		{"retired, manageable", with(func(n *hostabi.Node) { n.Retired, n.ProvisionState = true, "manageable" }), false, false, true, false, ReservedRetired},
		{"fault without maintenance", with(func(n *hostabi.Node) { n.Fault = "power failure" }), false, false, false, true, ReservedFault},
		{"fault with maintenance", with(func(n *hostabi.Node) { n.Fault, n.Maintenance = "power failure", true }), false, false, true, false, ReservedMaintenance},
		{"available in transition", with(func(n *hostabi.Node) { n.TargetProvisionState = "active" }), false, false, false, true, ReservedTransition},
		{"in transition with instance", with(func(n *hostabi.Node) { n.TargetProvisionState, n.InstanceUUID = "active", "i" }), false, false, true, false, ReservedInstance},
		{"instance_uuid", with(func(n *hostabi.Node) { n.InstanceUUID = "i" }), false, false, true, false, ReservedInstance},
		{"instance_uuid, skip_reserve_in_use", with(func(n *hostabi.Node) { n.InstanceUUID = "i" }), false, true, false, false, ReservedInstance},
		{"instance listed only", ok, true, false, false, false, ReservedInstance},
		{"retired with instance, skip_reserve_in_use", with(func(n *hostabi.Node) { n.Retired, n.InstanceUUID = true, "i" }), false, true, false, true, ReservedRetired},
	}
	for _, c := range cases {
		why := Reservation(c.node, c.instance)
		nova := NovaReserved(c.node, c.skip)
		if why != c.wantWhy || nova != c.nova || NeedsHold(why, nova) != c.wantHold {
			t.Errorf("%s: engine %q nova %v hold %v; want %q %v %v", c.name, why, nova, NeedsHold(why, nova),
				c.wantWhy, c.nova, c.wantHold)
		}
		// The invariant the arrangement rests on: whatever the engine
		// reserves is reserved by nova or held.
		if why != Schedulable && why != ReservedInstance && !nova && !NeedsHold(why, nova) {
			t.Errorf("%s: reserved by the engine but neither reserved by nova nor held", c.name)
		}
	}
}
