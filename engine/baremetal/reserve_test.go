package baremetal

import (
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// The reservation matrix of README.md, row by row.
func TestReservationMatrix(t *testing.T) {
	ok := hostabi.Node{PowerState: "power off", ProvisionState: "available"}
	with := func(f func(*hostabi.Node)) hostabi.Node { n := ok; f(&n); return n }
	cases := []struct {
		name     string
		node     hostabi.Node
		instance bool
		want     ReservedReason
	}{
		{"available, powered off", ok, false, Schedulable},
		{"available, powered on", with(func(n *hostabi.Node) { n.PowerState = "power on" }), false, Schedulable},
		{"no provision state (nova: NOSTATE)", with(func(n *hostabi.Node) { n.ProvisionState = "" }), false, Schedulable},
		{"maintenance", with(func(n *hostabi.Node) { n.Maintenance = true }), false, ReservedMaintenance},
		{"retired", with(func(n *hostabi.Node) { n.Retired = true }), false, ReservedRetired},
		{"fault", with(func(n *hostabi.Node) { n.Fault = "power failure" }), false, ReservedFault},
		{"power unknown", with(func(n *hostabi.Node) { n.PowerState = "" }), false, ReservedPowerState},
		{"power error", with(func(n *hostabi.Node) { n.PowerState = "error" }), false, ReservedPowerState},
		{"active", with(func(n *hostabi.Node) { n.ProvisionState = "active" }), false, ReservedProvision},
		{"cleaning", with(func(n *hostabi.Node) { n.ProvisionState = "cleaning" }), false, ReservedProvision},
		{"manageable", with(func(n *hostabi.Node) { n.ProvisionState = "manageable" }), false, ReservedProvision},
		{"deploying from available", with(func(n *hostabi.Node) { n.TargetProvisionState = "active" }), false, ReservedTransition},
		{"instance_uuid set", with(func(n *hostabi.Node) { n.InstanceUUID = "x" }), false, ReservedInstance},
		{"instance listed only", ok, true, ReservedInstance},
		{"active with an instance: in use", with(func(n *hostabi.Node) { n.ProvisionState, n.InstanceUUID = "active", "x" }), false, ReservedInstance},
		{"deploying an instance: in use", with(func(n *hostabi.Node) {
			n.ProvisionState, n.TargetProvisionState, n.InstanceUUID = "deploying", "active", "x"
		}), false, ReservedInstance},
		{"maintenance wins over instance", with(func(n *hostabi.Node) { n.Maintenance, n.InstanceUUID = true, "x" }), true, ReservedMaintenance},
	}
	for _, c := range cases {
		if got := Reservation(c.node, c.instance); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
