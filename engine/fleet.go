package engine

import (
	"context"
	"errors"
	"maps"

	"github.com/rpengine/rpengine/engine/placement"
)

// A fleet marker (Policy.FleetMarker): beside nova, engines that divide a
// fleet by partitions share one owner marker, written by nova from one
// provider config, so a take-over flips no marker (nova would write the
// old one back) and the hold consumers, named after the marker, are the
// fleet's. Each engine's providers are then those of the partitions it
// holds: the listing is cut to them, and what the engine knew of the
// others is forgotten when a peer takes them, their record entries and
// holds left to it (docs/NOVA.md, "Several engines").

// inShare says whether the provider uuid is this engine's to manage: with
// a fleet marker, when the engine holds its partition; always otherwise.
func (e *Engine) inShare(uuid string) bool {
	return !e.pol.FleetMarker || e.pol.Scope.HoldsPartitionOf(uuid)
}

// errNoPartitions: a fleet marker without partitions would make every
// provider of the fleet this engine's.
var errNoPartitions = errors.New("the owner marker is the fleet's but no partitions are held: refusing to take the whole fleet's providers")

// keepShare cuts listed to this engine's share and forgets the entries
// and holds of providers a peer holds now. It returns the holds handed
// over that way: their consumers still count in this engine's usage
// until the peer adopts or releases them (checkBook).
func (c *cycle) keepShare(listed map[string]placement.Generation) error {
	if !c.e.pol.FleetMarker {
		return nil
	}
	if c.e.pol.Scope.Partitions == 0 {
		return errNoPartitions
	}
	maps.DeleteFunc(listed, func(u string, _ placement.Generation) bool { return !c.e.inShare(u) })
	handed := c.state.forgetOutside(c.e.inShare)
	if len(handed) > 0 {
		c.holds.hand(handed)
		c.e.log.Info("providers handed over to the peers holding their partitions now", "holds", len(handed))
	}
	return nil
}

// forgetOutside forgets the providers, and drops from the book the holds,
// that keep says are not this engine's: a peer's record entries stay in
// the store for it (forget). It returns the holds dropped.
func (s *State) forgetOutside(keep func(string) bool) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for uuid := range s.providers.all() {
		if !keep(uuid) {
			gone = append(gone, uuid)
		}
	}
	for _, uuid := range gone {
		delete(s.shared, uuid)
		s.remove(uuid)
		s.dirty = true
	}
	var handed map[string]string
	for node, class := range s.holds {
		if !keep(node) {
			if handed == nil {
				handed = map[string]string{}
			}
			handed[node] = class
			delete(s.holds, node)
			s.dirty = true
		}
	}
	maps.DeleteFunc(s.peerHolds, func(node, _ string) bool { return !keep(node) })
	return handed
}

// hand notes holds handed over to a peer.
func (b *holdBook) hand(h map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.handed == nil {
		b.handed = map[string]string{}
	}
	maps.Copy(b.handed, h)
}

// recheckHanded drops from the handed holds those whose consumer no
// longer counts in this engine's usage: released, or adopted by the
// peer (its user). Called under the book's lock.
func (c *cycle) recheckHanded(ctx context.Context) error {
	for node := range c.holds.handed {
		cur, err := c.e.pc.GetConsumer(ctx, HoldConsumer(c.e.pol.OwnerTrait, node))
		if err != nil {
			return err
		}
		if !cur.Exists() || !c.ownsHold(cur) {
			delete(c.holds.handed, node)
		}
	}
	return nil
}

// notePeerHold notes a hold an entry names that the book lacks: a
// peer's, or this engine's own placed before its book was lost. Only its
// consumer is ever touched (hold.go), so a forged entry can at worst
// cost a read. Under s.mu.
func (s *State) notePeerHold(node, class string) {
	if class == "" || s.holds[node] != "" {
		return
	}
	if s.peerHolds == nil {
		s.peerHolds = map[string]string{}
	}
	s.peerHolds[node] = class
}

// wantHolds notes the holds desired that the book lacks, to be stored
// with the record before the run's first write (recordIntent).
func (s *State) wantHolds(desired []Desired) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var want map[string]string
	for _, d := range desired {
		if d.Hold == "" || s.holds[d.UUID] == d.Hold {
			continue
		}
		if want == nil {
			want = map[string]string{}
		}
		want[d.UUID] = d.Hold
		if s.holdWanted[d.UUID] != d.Hold {
			s.shareHold(d.UUID)
		}
	}
	s.holdWanted = want
}

// heldOrPeer is the book with the peers' holds the book lacks.
func (s *State) heldOrPeer() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(s.peerHolds)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, s.holds)
	return out
}

// ownsHold says whether a hold consumer counts in this engine's usage:
// its project and user. A fleet's consumer of another user is a peer's,
// adopted by writing it again with this engine's (placeHold).
func (c *cycle) ownsHold(cur placement.Consumer) bool {
	return cur.ProjectID == c.e.pol.Nova.HoldProject && cur.UserID == c.e.pol.Nova.HoldUser
}

// notePeer is notePeerHold under the state's lock.
func (s *State) notePeer(node, class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notePeerHold(node, class)
}
