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

// Reasons lists every ReservedReason, Schedulable first, in the order of
// the reservation matrix: the values metrics and the status page count.
var Reasons = []ReservedReason{Schedulable, ReservedMaintenance, ReservedRetired, ReservedFault, ReservedPowerState,
	ReservedProvision, ReservedTransition, ReservedInstance, ReservedQuarantined, ReservedPendingDeletion, ReservedLeftScope}

// State names r for people and metrics' labels: "schedulable" for "".
func (r ReservedReason) State() string {
	if r == Schedulable {
		return "schedulable"
	}
	return string(r)
}

// Condition is one reserving rule a node meets and the value that meets
// it, for explanations ("provision_state = cleaning (not available)").
type Condition struct {
	Reason ReservedReason
	Text   string
}

// Conditions lists every reserving rule n meets, with its value, in the
// matrix's order of rules, where Reservation returns the deciding one
// (its own order puts an instance before the provision state); a node
// with explicit resources (Disabled) meets only the first three.
// instances are the consumers on the node.
func Conditions(n hostabi.Node, instances []string) []Condition {
	var cs []Condition
	add := func(r ReservedReason, text string) { cs = append(cs, Condition{r, text}) }
	if n.Maintenance {
		add(ReservedMaintenance, "maintenance = true")
	}
	if n.Retired {
		add(ReservedRetired, "retired = true")
	}
	if n.Fault != "" {
		add(ReservedFault, "fault = "+n.Fault)
	}
	if n.ResourceClass == "" {
		return cs
	}
	switch n.PowerState {
	case unknownPower:
		add(ReservedPowerState, "power_state unknown")
	case errorPower:
		add(ReservedPowerState, "power_state = error")
	}
	if n.ProvisionState != "" && n.ProvisionState != availableProvisioned {
		add(ReservedProvision, "provision_state = "+n.ProvisionState+" (not available)")
	}
	if n.TargetProvisionState != "" {
		add(ReservedTransition, "target_provision_state = "+n.TargetProvisionState)
	}
	for _, in := range instances {
		add(ReservedInstance, "instance "+in)
	}
	return cs
}
