package engine

import (
	"strings"

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
func (b *Beside) reservedInventory(n *hostabi.Node, why baremetal.ReservedReason) bool {
	if !b.Enabled {
		return why != baremetal.Schedulable
	}
	return baremetal.NovaReserved(*n, b.SkipReserveInUse)
}

// hold returns the class to hold for a node beside nova, or "".
func (b Beside) hold(n hostabi.Node, why baremetal.ReservedReason, class string) string {
	if b.Enabled && baremetal.NeedsHold(why, baremetal.NovaReserved(n, b.SkipReserveInUse)) {
		return class
	}
	return ""
}

// OwnerNova is the standard trait nova ≥ 34 (2026.2) writes on every root
// provider it reports, and that its scheduler then requires
// (request_filter.owner_nova_filter). See docs/NOVA.md.
const OwnerNova = "OWNER_NOVA"

// otherOwner returns the owner marker of another manager on a provider,
// if any. Beside nova, OWNER_NOVA is no other manager's: nova ≥ 34 writes
// it on the very providers it shares with this engine by arrangement, so
// it is neither refused nor taken over. Alone, it marks nova's providers
// (another engine's marker beside it names that engine).
func (e *Engine) otherOwner(traits []string) string {
	nova := ""
	for _, t := range traits {
		switch {
		case strings.HasPrefix(t, OwnerTraitPrefix) && t != e.pol.OwnerTrait:
			return t
		case t == OwnerNova && !e.pol.Nova.Enabled:
			nova = t
		}
	}
	return nova
}
