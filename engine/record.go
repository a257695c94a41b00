package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine/placement"
)

// The ownership record: what the engine must still know after kill -9.
//
// The engine removes only the traits and aggregates it added, so it must
// remember, across any crash, what it may have added. The cache's Managed
// sets used to reach the file only at the end of a cycle: a crash after a
// trait write lost them, and the next cold read adopted the stale trait
// (a CUSTOM_GPU left on a node without a GPU). Now, before a cycle sends
// its first write, everything it may add — every desired trait and
// aggregate, and every provider it may create — is added to the record and
// the file is fsynced once (not once per write). An idle cycle adds
// nothing and writes nothing. A record that cannot be written stops the
// cycle before any write.
//
// RATIONALE.md says why the record is a local file and not kept in
// Placement itself.

// intend adds to the record what this cycle may write: the desired
// traits and aggregates of every provider, and a pending creation for
// each desired provider not among this engine's listed providers. It
// reports whether the record changed and so must be saved first. gens,
// if not nil, is each desired provider's listed generation (probeListed),
// read instead of listed; it is given by a whole cycle only, whose slots
// are kept for the next (hints).
// seen, if not nil, is shown each desired provider's entry as it leaves it.
func (s *State) intend(desired []Desired, listed map[string]placement.Generation, gens []placement.Generation, seen func(int, known)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	hints := s.hints
	if gens != nil {
		hints = s.hintsFor(len(desired))
		s.providers.reserve(len(desired))
	}
	changed := false
	for i, d := range desired {
		j := s.slotOf(hints, i, d.UUID)
		var k known
		if j >= 0 {
			k = s.providers.slots[j].k
		}
		var isListed bool
		if gens != nil {
			isListed = gens[i] != "" // the listing refuses an empty generation
		} else {
			_, isListed = listed[d.UUID]
		}
		add := !isListed && !k.Pending
		if !containsAll(k.Managed.Traits, d.Traits) || !containsAll(k.Managed.Aggregates, d.Aggregates) {
			k.Managed.Traits = sortedSet(slices.Concat(k.Managed.Traits, d.Traits))
			k.Managed.Aggregates = sortedSet(slices.Concat(k.Managed.Aggregates, d.Aggregates))
			add = true
		}
		if add {
			if !k.Pending && !isListed {
				s.pending++ // the entry's only change that counts (recount)
			}
			k.Pending = k.Pending || !isListed
			if s.shared != nil {
				s.shared[d.UUID] = struct{}{}
			}
			j = s.providers.putAt(j, d.UUID, k)
			s.writes++
			changed = true
		}
		if seen != nil {
			seen(i, k)
		}
		if gens != nil {
			hints[i] = j
		}
	}
	if changed {
		s.dirty = true
	}
	return changed
}

// hintsFor makes s.hints n long for a whole cycle's intend, keeping the
// last cycle's: each is checked before it is used (entries.at).
func (s *State) hintsFor(n int) []int32 {
	if n > cap(s.hints) {
		s.hints = append(s.hints[:cap(s.hints)], make([]int32, n-cap(s.hints))...)
	}
	s.hints = s.hints[:n]
	return s.hints
}

// slotOf is the slot of desired provider i, uuid: where the last whole
// cycle found it, if it is still there (-1 if it has none).
func (s *State) slotOf(hints []int32, i int, uuid string) int32 {
	hint := int32(-1)
	if i < len(hints) {
		hint = hints[i]
	}
	return s.providers.at(hint, uuid)
}

// containsAll reports whether sorted set has every element of want.
func containsAll(set, want []string) bool {
	for _, w := range want {
		if _, ok := slices.BinarySearch(set, w); !ok {
			return false
		}
	}
	return true
}

// pendingOrphans lists recorded pending creations that are neither
// desired nor listed as ours: a crash may have left them created but
// unmarked.
// desired is sorted by uuid (DesiredState), so it is searched, not put in
// a map: at 100,000 providers the map cost an idle cycle 10 ms and 5 MB.
func (s *State) pendingOrphans(desired []Desired, listed map[string]placement.Generation) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == 0 { // the usual case: no walk of every entry
		return nil
	}
	var out []string
	for uuid, k := range s.providers.all() {
		if !k.Pending {
			continue
		}
		if _, ok := listed[uuid]; !ok && !isDesired(desired, uuid) {
			out = append(out, uuid)
		}
	}
	slices.Sort(out)
	return out
}

// isDesired searches desired, sorted by uuid, for uuid.
func isDesired(desired []Desired, uuid string) bool {
	_, ok := slices.BinarySearchFunc(desired, uuid, func(d Desired, u string) int { return strings.Compare(d.UUID, u) })
	return ok
}

// claimOrphans resolves pending creations left by a crash: a provider that
// exists empty (no trait, no inventory: what a create cut short before
// its first traits write leaves) was created by this engine, so it gets
// the marker and joins listed, where the deletion rules (two proofs, no
// allocations) decide its fate like any other. The record is evidence,
// not authority: one that holds anything this engine did not write (a
// trait, an inventory) is left alone and reported, whatever the record
// says. One that is gone or owned by another is forgotten.
func (c *cycle) claimOrphans(ctx context.Context, desired []Desired, listed map[string]placement.Generation) {
	for _, uuid := range c.state.pendingOrphans(desired, listed) {
		gen, traits, err := c.e.pc.Traits(ctx, uuid)
		switch {
		case errors.Is(err, placement.ErrNotFound):
			c.state.drop(uuid)
			continue
		case err != nil:
			c.fail(ErrPlacement, uuid, fmt.Sprintf("provider %s: check a creation cut short: %v", uuid, err))
			continue
		case slices.Contains(traits, c.e.pol.OwnerTrait):
			listed[uuid] = gen // marked after all; the listing raced it
		case c.e.otherOwner(traits) != "":
			c.state.forget(uuid) // its record entry is the new owner's
			continue
		default:
			if !c.claimEmpty(ctx, uuid, gen, traits, listed) {
				continue
			}
		}
		c.state.update(uuid, func(k *known) { k.Pending = false; k.Generation = "" })
	}
}

// claimEmpty marks an unmarked provider as this engine's only when it is
// empty; otherwise it drops the record's claim and says so.
func (c *cycle) claimEmpty(ctx context.Context, uuid string, gen placement.Generation, traits []string, listed map[string]placement.Generation) bool {
	var inv map[string]placement.Inventory
	var err error
	if len(traits) == 0 {
		gen, inv, err = c.e.pc.Inventories(ctx, uuid)
	}
	switch {
	case err != nil:
		c.fail(ErrPlacement, uuid, fmt.Sprintf("provider %s: check a creation cut short: %v", uuid, err))
		return false
	case len(traits) > 0 || len(inv) > 0:
		c.state.update(uuid, func(k *known) { k.Pending = false })
		c.warn(fmt.Sprintf("provider %s: the record says this engine's creation of it was cut short, but it holds "+
			"%d traits and %d inventories this engine did not write: left alone", uuid, len(traits), len(inv)))
		return false
	}
	set, err := c.knownTraits(ctx, []string{c.e.pol.OwnerTrait})
	if err == nil {
		gen, err = c.w.SetTraits(ctx, uuid, gen, set)
	}
	if err != nil {
		c.fail(ErrPlacement, uuid, fmt.Sprintf("provider %s: mark a creation cut short: %v", uuid, err))
		return false
	}
	c.e.log.Info("provider created before a crash marked as ours", "node", uuid)
	listed[uuid] = gen
	return true
}

// warn adds a warning to the cycle's report.
func (c *cycle) warn(msg string) {
	c.mu.Lock()
	c.r.Warnings = append(c.r.Warnings, msg)
	c.mu.Unlock()
}

// listedGens is c.gens, probed from listed on the first call of the
// cycle (listOthers in a whole cycle, else recordIntent): the listing is
// not written between the two.
func (c *cycle) listedGens(desired []Desired, listed map[string]placement.Generation) []placement.Generation {
	if c.gens == nil {
		c.gens = probeListed(desired, listed)
	}
	return c.gens
}

// probeListed is each desired provider's generation in listed, by index
// ("" if not listed): one probe of the listing a provider a cycle, for
// listOthers, intend, the syncs and vanished. The probes run in a loop
// of their own: each misses the cache, and alone the next ones overlap it.
func probeListed(desired []Desired, listed map[string]placement.Generation) []placement.Generation {
	gens := make([]placement.Generation, len(desired))
	for i, d := range desired {
		gens[i] = listed[d.UUID]
	}
	return gens
}
