package engine

import (
	"context"

	"github.com/rpengine/rpengine/engine/placement"
)

// A hold Placement refused because another consumer (an instance) uses
// the node's unit costs three requests to try again (GET consumer, PUT,
// GET usages). The occupant leaving (DELETE /allocations) frees the unit
// without moving the provider's generation, so the generation alone cannot
// say when to try again; one listing per class of the providers with room
// for a unit can. A refused hold is tried again only when its node's
// generation moved or that listing names it, so N occupied holds cost one
// request per class a cycle, and the cycle after the occupant left places
// the hold: while occupied, the node has no unit the scheduler could take.

// refusal is an occupied node's hold class and its generation at the
// refusal.
type refusal struct {
	class string
	gen   placement.Generation
}

// stillOccupied are the desired nodes whose hold was refused at the
// generation listed now and whose node Placement does not list with room
// for the class: the ones placeHolds leaves alone this cycle. On a failed
// listing it returns an empty map (every hold is tried, as without this).
func (c *cycle) stillOccupied(ctx context.Context, desired []Desired, listed map[string]placement.Generation, held map[string]string) map[string]refusal {
	waiting := map[string]refusal{}
	var classes []string
	for _, d := range desired {
		r, ok := c.holds.refused[d.UUID]
		if ok && d.Hold == r.class && held[d.UUID] != d.Hold && listed[d.UUID] == r.gen {
			waiting[d.UUID] = r
			classes = appendNew(classes, r.class)
		}
	}
	for _, rc := range classes {
		room, err := c.roomFor(ctx, rc) // holdswap.go
		if err != nil {
			c.e.log.Warn("cannot list providers with room; trying every occupied hold", "class", rc, "error", err)
			return map[string]refusal{}
		}
		for node := range room {
			if waiting[node].class == rc {
				delete(waiting, node) // the occupant left: place it
			}
		}
	}
	return waiting
}

// refuse remembers that d's hold was refused at gen ("" for a provider
// created this cycle: not remembered, tried again at the next).
func (b *holdBook) refuse(d Desired, gen placement.Generation) {
	if gen != "" {
		b.refused[d.UUID] = refusal{class: d.Hold, gen: gen}
	}
}

func appendNew(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
