package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine/placement"
)

// holdLeft keeps a node that left the scope off the scheduler beside
// nova. reserveLeft reserves its provider fully, but nova-compute, which
// may still report the node (nova 26 has no shards), writes reserved 0
// back at its next association refresh: only a hold survives that. Each
// left node without a hold gets one on its bare-metal class, in one
// reshape with reserved 0 there (the hold takes the whole unit, so the
// node stays unschedulable, and nova's own value is not fought over).
// The hold goes when the node comes back (the sync's release) or another
// engine takes the provider (no longer ours: settleHolds releases it).
// Under c.holds.mu.
func (c *cycle) holdLeft(ctx context.Context, held map[string]string, rep *NovaReport) {
	left := make([]string, 0, len(c.left))
	for u := range c.left {
		if held[u] == "" {
			left = append(left, u)
		}
	}
	slices.Sort(left)
	for _, u := range left {
		gen, inv, err := c.e.pc.Inventories(ctx, u)
		if err != nil {
			c.fail(ErrPlacement, u, fmt.Sprintf("provider %s: out of this engine's scope, reserved, not held: %v", u, err))
			continue
		}
		class := wholeClass(inv)
		if class == "" {
			continue // not one bare-metal unit: the reserve stays alone
		}
		i := inv[class]
		i.Reserved = 0
		inv[class] = i
		c.placeOne(ctx, Desired{UUID: u, Inventory: inv, Hold: class, Whole: true}, gen, rep)
	}
}

// wholeClass is the one custom class of a bare-metal provider's
// inventory (total 1), "" when there is not exactly one.
func wholeClass(inv map[string]placement.Inventory) string {
	found := ""
	for rc, i := range inv {
		if !strings.HasPrefix(rc, "CUSTOM_") || i.Total != 1 {
			continue
		}
		if found != "" {
			return ""
		}
		found = rc
	}
	return found
}

// leftHeld says which left nodes a hold already keeps beside nova: they
// need no reserve (nova would set it back; the hold is what holds). Each
// keeps its listed generation as its doubt's, the one the engine last
// saw it at (a new process then finds no hold's room to check again).
func (c *cycle) leftHeld(ds []doubtful) map[string]bool {
	if !c.e.pol.Nova.Enabled {
		return nil
	}
	book := c.state.heldBook()
	out := map[string]bool{}
	for _, d := range ds {
		if book[d.uuid] == "" {
			continue
		}
		out[d.uuid] = true
		if k, _ := c.state.get(d.uuid); k.Doubt != string(d.why) || k.DoubtGeneration != d.gen {
			c.state.update(d.uuid, func(k *known) { k.Doubt, k.DoubtGeneration = string(d.why), d.gen })
		}
	}
	return out
}
