package engine

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// Other owners' providers, listed in bulk.
//
// A desired provider this engine's marker does not list is either new,
// another engine's (to be taken over when the fleet says so), or an
// owner's it must leave alone. Asking each one by name cost a refused
// create and a read of the provider (6 requests a provider taken over,
// 5 a provider left alone on a restart). Instead one request lists the
// engines' owner traits, and one a trait lists that owner's providers
// with their generations: what a take-over then reads and flips, and
// what the quiet book then leaves alone, needs no lookup of its own.

// others is what listOthers found: providers of owners this engine may
// take over, with their listed generations.
type others struct {
	takeable map[string]placement.Generation
	left     map[string]leftBehind // leftbehind.go
	sweep    string                // the held partitions searched for them ("": not searched)
}

// listOthers lists the providers of every other engine's owner marker
// when some desired provider is neither ours nor known to the quiet book
// (an idle cycle lists nothing more). A desired provider of an owner it
// may take over is adopted by syncOne from its listed generation; one of
// an owner it may not take over is left alone like one seen before. A
// failed listing only means those providers are looked up one by one.
func (c *cycle) listOthers(ctx context.Context, desired []Desired, listed map[string]placement.Generation) {
	e := c.e
	o := others{takeable: map[string]placement.Generation{}}
	c.quiet.takeableSeen(e.mayTakeOver, o.takeable)
	c.others = o
	want := c.quiet.unknown(desired, c.listedGens(desired, listed))
	sweep := c.sweepDue() // leftbehind.go
	if len(want) == 0 && sweep == "" {
		return
	}
	traits, err := e.pc.TraitsStartingWith(ctx, OwnerTraitPrefix)
	if err != nil {
		e.log.Warn("owner markers not listed: other owners' providers are looked up one by one", "err", err)
		return
	}
	// The owners it may take over first: a take-over's providers are
	// theirs, and once none is wanted the others (engines long gone
	// among them) need no listing.
	slices.SortStableFunc(traits, func(a, b string) int { return boolInt(!e.mayTakeOver(a)) - boolInt(!e.mayTakeOver(b)) })
	for _, owner := range traits {
		mayTake := e.mayTakeOver(owner)
		if owner == e.pol.OwnerTrait || len(want) == 0 && (sweep == "" || !mayTake) {
			continue
		}
		gens, err := e.pc.ProviderGenerations(ctx, url.Values{"required": {owner}}, 0)
		if err != nil {
			e.log.Warn("providers of another owner not listed: they are looked up one by one", "owner", owner, "err", err)
			sweep = "" // swept again next cycle
			continue
		}
		c.quiet.sawOwner(owner, gens, want, mayTake, o.takeable)
		if sweep != "" && mayTake {
			c.leftBy(owner, gens, desired, &o)
		}
	}
	o.sweep = sweep
	c.others = o
}

// unknown is the set of desired providers neither listed as ours (gens,
// by index: probeListed) nor in this cycle's listings of other owners.
func (q *quiet) unknown(desired []Desired, gens []placement.Generation) map[string]struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	var want map[string]struct{}
	for i, d := range desired {
		if gens[i] != "" { // ours: the listing refuses an empty generation
			continue
		}
		if _, seen := q.others[d.UUID]; seen {
			continue
		}
		if want == nil {
			want = map[string]struct{}{}
		}
		want[d.UUID] = struct{}{}
	}
	return want
}

// sawOwner takes owner's listing: each wanted provider in it is put in
// takeable when the engine may take it over, else remembered as owner's
// at its listed generation, so leftAlone spares it any request. Either
// way it is no longer wanted.
func (q *quiet) sawOwner(owner string, gens map[string]placement.Generation, want map[string]struct{}, mayTake bool,
	takeable map[string]placement.Generation) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for uuid, g := range gens {
		if _, ok := want[uuid]; !ok || g == "" {
			continue
		}
		delete(want, uuid)
		if mayTake {
			takeable[uuid] = g
			continue
		}
		if q.foreign == nil {
			q.foreign = map[string]foreignSeen{}
		}
		if q.others == nil {
			q.others = map[string]placement.Generation{}
		}
		q.foreign[uuid] = foreignSeen{owner, g}
		q.others[uuid] = g
		q.anyForeign.Store(true)
	}
}

// takeableSeen puts in takeable the providers the book left alone as an
// owner's the engine may now take over (the peer died after they were
// seen), at the generation this cycle listed them (beginQuiet). The book
// keeps them out of the unknown ones, so without this each cost a refused
// create, a lookup and a read before its marker flipped.
func (q *quiet) takeableSeen(mayTake func(string) bool, takeable map[string]placement.Generation) {
	if !q.anyForeign.Load() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for uuid, f := range q.foreign {
		if g := q.others[uuid]; g != "" && mayTake(f.owner) {
			takeable[uuid] = g
		}
	}
}

// reserveFirst puts a taken-over provider's inventory write before the
// traits write that flips its marker: until that write the provider is
// offered as its departed owner left it, and where the node must now be
// reserved, that is the write that cannot wait for the flip.
func reserveFirst(ws []Write) []Write {
	inv := slices.IndexFunc(ws, func(w Write) bool { return w.Op == OpInventory })
	tr := slices.IndexFunc(ws, func(w Write) bool { return w.Op == OpTraits })
	if inv < 0 || tr < 0 || inv < tr {
		return ws
	}
	out := slices.Clone(ws)
	w := out[inv]
	copy(out[tr+1:inv+1], out[tr:inv])
	out[tr] = w
	return out
}

// urgentFirst orders a take-over's syncs: first the providers taken over
// whose inventory must change (a node the rules now reserve, a class
// changed while no engine held it) or is not known, then this engine's
// own, last the taken-over ones whose write only flips the marker, from
// position flips on. At 1,000 nodes on a loaded Placement the flips take
// seconds: the scheduler must not wait that long for a node in
// maintenance to be reserved, nor a node sync (which does not write while
// a full cycle does) for the flips (yieldFlips). nil when nothing is
// taken over.
func (c *cycle) urgentFirst(desired []Desired) (order []int, flips int) {
	if len(c.others.takeable) == 0 {
		return nil, len(desired)
	}
	var urgent, own, flip []int
	for i, d := range desired {
		_, taken := c.others.takeable[d.UUID]
		switch {
		case taken && c.inventoryMoves(d):
			urgent = append(urgent, i)
		case taken:
			flip = append(flip, i)
		default:
			own = append(own, i)
		}
	}
	order = slices.Concat(urgent, own, flip)
	return order, len(order) - len(flip)
}

// yieldFlips leaves the flips from position i on to the next cycle when a
// node sync waits for this one's writes: a notification is worth more
// than a marker. Each cycle flips for flipsAtLeast first, so a stream of
// notifications cannot stop a take-over. next is the workers' shared
// position, n the end; each position left is counted once
// (Report.TakeOverLeft).
func (c *cycle) yieldFlips(i, n int, next *atomic.Int64) bool {
	now := c.e.now().UnixNano()
	c.flipsFrom.CompareAndSwap(0, now)
	if c.e.order.waiting.Load() == 0 || time.Duration(now-c.flipsFrom.Load()) < flipsFor(c.e.order.yields.Load()) {
		return false
	}
	rest := int(next.Swap(int64(n)))
	if rest < n { // the first worker to stop: once a cycle
		c.e.order.yields.Add(1)
	}
	c.mu.Lock()
	c.r.TakeOverLeft += 1 + max(0, n-rest)
	c.mu.Unlock()
	return true
}

// flipsAtLeast is how long a take-over flips markers before it yields to
// a waiting node sync.
const flipsAtLeast = time.Second

// flipsFor is how long a take-over flips before it yields, after yields
// cycles in a row that did: twice as long each time, up to a minute. On
// a loaded Placement, where a cycle's listing takes longer than a second
// of flips, a steady stream of notifications would otherwise stretch a
// take-over of hundreds of providers over minutes.
func flipsFor(yields int32) time.Duration {
	return flipsAtLeast << min(yields, 6)
}

// flipsDone notes a take-over cycle that flipped all it had without
// yielding: the next one starts again from flipsAtLeast.
func (c *cycle) flipsDone(order []int) {
	if order != nil && c.r.TakeOverLeft == 0 {
		c.e.order.yields.Store(0)
	}
}

// inventoryMoves says d's inventory differs from what the record saw of
// its provider (Plan's test), or nothing was seen.
func (c *cycle) inventoryMoves(d Desired) bool {
	k, ok := c.state.get(d.UUID)
	return !ok || !k.Observed.Exists || !maps.Equal(k.Observed.Inventory, d.Inventory)
}

// inOrder is desired from position p on, in order (nil: as it is).
func inOrder(desired []Desired, order []int, p int) []Desired {
	if order == nil {
		return desired[p:]
	}
	out := make([]Desired, 0, len(order)-p)
	for _, i := range order[p:] {
		out = append(out, desired[i])
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
