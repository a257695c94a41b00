package engine

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/rpengine/rpengine/engine/placement"
)

// The hold project's usage total (checkBook) misses a swap: one hold
// deleted and another allocation of the hold project planted, so the total
// is unchanged while a node the rules reserve has room for nova. The
// provider that lost its hold shows nothing: deleting a consumer's
// allocations (DELETE /allocations/{c}, as nova-manage placement audit
// --delete and the client do) does not move its provider's generation on
// the real Placement. The plant does move its provider's. So while no
// provider in the owner listing has moved since the last check, no swap
// can have happened among them and nothing is read; once one has, one
// listing per hold class of this engine's providers with room for a unit
// names every held node that lost its hold, whichever way it went.

// checkRoom takes out of the book each hold whose node Placement shows
// with room for its class, so placeHolds puts it back (with the inventory
// it guards) before any sync. Called when the usage total agrees.
func (c *cycle) checkRoom(ctx context.Context, desired []Desired, listed map[string]placement.Generation, book map[string]string) error {
	if len(book) == 0 {
		c.holds.seen = nil
		return nil
	}
	if !c.holds.movedSince(c.gens, desired, listed, c.state) {
		if c.holds.seen == nil { // a new process: from now on, its own
			c.holds.seen = c.keepSeen(desired, listed, book)
		}
		return nil // the last check's listing still stands
	}
	for _, rc := range holdClasses(book) {
		room, err := c.roomFor(ctx, rc)
		if err != nil {
			return fmt.Errorf("list providers with room for %s: %w", rc, err)
		}
		for node := range room {
			if book[node] == rc {
				c.e.log.Warn("hold missing though the hold project's usage agrees (deleted, another planted?): placing it again",
					"node", node, "class", rc)
				c.state.dropHeld(node)
			}
		}
	}
	c.holds.seen = c.keepSeen(desired, listed, book)
	return nil
}

// listingSeen is the owner listing at a check, kept as cheaply as it can
// be compared: the desired uuids in their (sorted) order with their
// listed generations, or the whole listing while it also has providers of
// no desired node. It is never changed once made (a plan shares it).
type listingSeen struct {
	uuids []string
	gens  []placement.Generation
	all   map[string]placement.Generation
}

// keepSeen is the listing to compare the next ones with; none while
// nothing is held (the next hold placed is checked at its first cycle).
func (c *cycle) keepSeen(desired []Desired, listed map[string]placement.Generation, book map[string]string) *listingSeen {
	if len(book) == 0 {
		return nil
	}
	if len(c.gens) != len(desired) || listedCount(c.gens) != len(listed) {
		return &listingSeen{all: listed}
	}
	uuids := make([]string, len(desired))
	for i, d := range desired {
		uuids[i] = d.UUID
	}
	return &listingSeen{uuids: uuids, gens: c.gens}
}

// movedSince says whether any listed provider's generation differs from
// the listing at the last check. A new process has none and compares with
// the generations in its record instead: a restored or stale record then
// differs wherever a hold was placed since, and an idle `engine once`
// sends nothing more. The caller holds b.mu.
func (b *holdBook) movedSince(gens []placement.Generation, desired []Desired, listed map[string]placement.Generation, s *State) bool {
	seen := b.seen
	switch {
	case seen == nil:
		return s.generationsDiffer(listed)
	case seen.all != nil:
		return mapMoved(seen.all, listed)
	case len(gens) != len(desired) || len(desired) != len(seen.uuids) || listedCount(seen.gens) != len(listed):
		return true
	}
	for i, d := range desired {
		if gens[i] != seen.gens[i] || d.UUID != seen.uuids[i] {
			return true
		}
	}
	return false
}

func mapMoved(seen, listed map[string]placement.Generation) bool {
	for u, g := range listed {
		if seen[u] != g {
			return true
		}
	}
	return false
}

// listedCount counts the generations of providers listed ("" if not).
func listedCount(gens []placement.Generation) int {
	n := 0
	for _, g := range gens {
		if g != "" {
			n++
		}
	}
	return n
}

// generationsDiffer says whether any listed provider's generation is not
// the one the state last saw ("" once invalidated), or, on doubt, the
// doubt's.
func (s *State) generationsDiffer(listed map[string]placement.Generation) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for u, g := range listed {
		// A provider reserved or held on doubt is not synced: the doubt's
		// generation is the one the engine last saw.
		if k, _ := s.providers.get(u); k.Generation != g && (k.Doubt == "" || k.DoubtGeneration != g) {
			return true
		}
	}
	return false
}

// holdClasses are the classes the book holds, sorted.
func holdClasses(book map[string]string) []string {
	var out []string
	for _, rc := range book {
		if !slices.Contains(out, rc) {
			out = append(out, rc)
		}
	}
	slices.Sort(out)
	return out
}

// roomFor lists this engine's providers with room for a unit of class rc,
// once a cycle: the swap check and the occupied holds (holdoccupied.go)
// both ask, before any hold is written, so one answer serves both.
func (c *cycle) roomFor(ctx context.Context, rc string) (map[string]placement.Generation, error) {
	if room, ok := c.rooms[rc]; ok {
		return room, nil
	}
	room, err := c.e.pc.ProviderGenerations(ctx, url.Values{"required": {c.e.pol.OwnerTrait}, "resources": {rc + ":1"}}, 0)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(room, func(u string, _ placement.Generation) bool { return !c.e.inShare(u) }) // fleet.go
	if c.rooms == nil {
		c.rooms = map[string]map[string]placement.Generation{}
	}
	c.rooms[rc] = room
	return room, nil
}
