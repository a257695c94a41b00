package engine

import (
	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// Beside is how the engine shares providers with nova-compute's Ironic
// driver (docs/NOVA.md). nova rewrites a provider's inventory and traits
// to its own rules whenever it re-reads it; so beside it the engine writes
// exactly nova's inventory (baremetal.NovaReserved), lets nova write the
// owner marker from its provider config (`engine nova-config`), and keeps
// the nodes its stricter rules reserve off the scheduler with a hold
// allocation (hold.go), which nova leaves alone. After convergence neither
// writes.
type Beside struct {
	Enabled bool
	// SkipReserveInUse mirrors nova's [workarounds]
	// skip_reserve_in_use_ironic_nodes.
	SkipReserveInUse bool
	// HoldProject and HoldUser own the hold consumers.
	HoldProject, HoldUser string
}

// reservedInventory says whether a bare-metal node's inventory record is
// reserved: the engine's matrix alone, or beside nova, nova's rule.
func (b Beside) reservedInventory(n hostabi.Node, why baremetal.ReservedReason) bool {
	if !b.Enabled {
		return why != baremetal.Schedulable
	}
	return baremetal.NovaReserved(n, b.SkipReserveInUse)
}

// hold returns the class to hold for a node beside nova, or "".
func (b Beside) hold(n hostabi.Node, why baremetal.ReservedReason, class string) string {
	if b.Enabled && baremetal.NeedsHold(why, baremetal.NovaReserved(n, b.SkipReserveInUse)) {
		return class
	}
	return ""
}
