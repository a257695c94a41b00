package baremetal

import "github.com/rpengine/rpengine/hostabi"

// ReservedReason says why a node must not receive new consumers; "" means
// it is schedulable. The order is the order of the reservation matrix in
// docs/BEHAVIOUR.md.
type ReservedReason string

// The reasons, in the order of docs/BEHAVIOUR.md's reservation matrix.
const (
	Schedulable         ReservedReason = ""
	ReservedMaintenance ReservedReason = "maintenance"
	ReservedRetired     ReservedReason = "retired"
	ReservedFault       ReservedReason = "fault"
	ReservedPowerState  ReservedReason = "power_state"
	ReservedProvision   ReservedReason = "provision_state"
	ReservedTransition  ReservedReason = "target_provision_state"
	ReservedInstance    ReservedReason = "instance"
	ReservedQuarantined ReservedReason = "quarantined"
	// ReservedPendingDeletion: the node is not listed and proven gone
	// once; the next proof deletes its provider.
	ReservedPendingDeletion ReservedReason = "pending_deletion"
	// ReservedLeftScope: the node is not listed but exists: it left this
	// engine's scope (another shard or conductor group). Kept reserved
	// until another engine takes the provider over or it comes back.
	ReservedLeftScope ReservedReason = "left_scope"
)

// The Ironic states the rules compare against.
const (
	unknownPower         = ""
	errorPower           = "error"
	availableProvisioned = "available"
)

// Reservation decides whether a bare-metal node is reserved. It is nova's
// predicate (maintenance, power state unknown or error, an instance
// present, provision state other than available) plus the fields nova ignores:
// retired, fault and a pending target provision state (bug 1974070: a node
// being cleaned must never be a candidate).
func Reservation(n hostabi.Node, hasInstance bool) ReservedReason {
	switch {
	case n.Maintenance:
		return ReservedMaintenance
	case n.Retired:
		return ReservedRetired
	case n.Fault != "":
		return ReservedFault
	case n.PowerState == unknownPower || n.PowerState == errorPower:
		return ReservedPowerState
	case hasInstance || n.InstanceUUID != "":
		// Before the provision state: an active node's reason is that it
		// is in use, which is what an operator counting nodes asks.
		return ReservedInstance
	case n.ProvisionState != availableProvisioned && n.ProvisionState != "":
		return ReservedProvision
	case n.TargetProvisionState != "":
		return ReservedTransition
	}
	return Schedulable
}

// Disabled is the subset that applies to nodes with explicit resources
// (other hypervisors), which have no provision or power states and host
// many instances, so an instance does not reserve them.
func Disabled(n hostabi.Node) ReservedReason {
	switch {
	case n.Maintenance:
		return ReservedMaintenance
	case n.Retired:
		return ReservedRetired
	case n.Fault != "":
		return ReservedFault
	}
	return Schedulable
}
