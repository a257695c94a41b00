package baremetal

import "github.com/rpengine/rpengine/hostabi"

// NovaReserved is the reserved value nova 26.2.2's Ironic driver writes for
// a node (nova/virt/ironic/driver.py: update_provider_tree), so that an
// engine running beside nova-compute writes the very same inventory and the
// two never flip it:
//
//   - _node_resources_unavailable: maintenance, power_state error or
//     unknown (None), provision_state other than available or None;
//   - _node_resources_used: instance_uuid set, unless nova runs with
//     [workarounds] skip_reserve_in_use_ironic_nodes = true.
//
// nova ignores retired, fault, target_provision_state and the instance
// list; NeedsHold covers those.
func NovaReserved(n hostabi.Node, skipReserveInUse bool) bool {
	unavailable := n.Maintenance ||
		n.PowerState == unknownPower || n.PowerState == errorPower ||
		n.ProvisionState != availableProvisioned && n.ProvisionState != ""
	used := n.InstanceUUID != "" && !skipReserveInUse
	return unavailable || used
}

// NeedsHold says whether a node the engine reserves for why, and nova does
// not (novaReserved false), must be kept off the scheduler by a hold
// allocation instead of its inventory's reserved value. An instance never
// needs one: its own allocation already uses the node's only unit (that is
// what nova relies on with skip_reserve_in_use_ironic_nodes).
func NeedsHold(why ReservedReason, novaReserved bool) bool {
	return why != Schedulable && why != ReservedInstance && !novaReserved
}
