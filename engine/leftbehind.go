package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
)

// Providers a departed peer left behind.
//
// A take-over adopts the departed owner's providers of the nodes the
// source lists (takeover.go). A node deleted, or moved out of scope,
// while no engine held its partition (between its owner's death and the
// take-over) is listed by no one: its provider would stay as the dead
// owner left it, offered, for good. So when the partitions held change,
// the cycle that lists other owners' providers also takes, of each owner
// it may take over, those in a partition it holds whose node its listing
// lacks: reserved first, then marked as its own. From then on they are
// its unlisted providers like any other (deletion.go: proven gone twice,
// then deleted). Beside nova the fleet's marker is the engine's own, so
// its listing has them already (fleet.go).

// leftBehind is a provider of a departed owner whose node is not listed.
type leftBehind struct {
	owner string
	gen   placement.Generation
}

// sweepDue returns the key of the partitions held when they changed since
// the last search for left-behind providers ("" when none is due: none
// changed, or the scope has no partitions to tell a provider's by).
func (c *cycle) sweepDue() string {
	s := c.e.pol.Scope
	if s.Partitions == 0 || c.e.pol.MayTakeOver == nil {
		return ""
	}
	held := slices.Sorted(slices.Values(s.Held))
	var b strings.Builder
	b.WriteString(strconv.Itoa(s.Partitions))
	for _, p := range held {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(p))
	}
	key := b.String()
	c.quiet.mu.Lock()
	defer c.quiet.mu.Unlock()
	if key == c.quiet.sweptHeld {
		return ""
	}
	return key
}

// swept notes the partitions whose search is done ("": not done).
func (q *quiet) swept(key string) {
	if key == "" {
		return
	}
	q.mu.Lock()
	q.sweptHeld = key
	q.mu.Unlock()
}

// leftBy adds to o the providers of owner (gens, as listed) in a held
// partition whose node is not desired.
func (c *cycle) leftBy(owner string, gens map[string]placement.Generation, desired []Desired, o *others) {
	for u, g := range gens {
		if g == "" || isDesired(desired, u) || !c.e.pol.Scope.HoldsPartitionOf(u) {
			continue
		}
		if o.left == nil {
			o.left = map[string]leftBehind{}
		}
		o.left[u] = leftBehind{owner, g}
	}
}

// withLeft is listed with the left-behind providers added: the record's
// evidence that their entries are this engine's to take (their pause, what
// their owner managed).
func (c *cycle) withLeft(listed map[string]placement.Generation) map[string]placement.Generation {
	if len(c.others.left) == 0 {
		return listed
	}
	out := maps.Clone(listed)
	for u, l := range c.others.left {
		out[u] = l.gen
	}
	return out
}

// adoptLeft reserves each left-behind provider fully, then flips its
// marker from its departed owner's to this engine's, both checked by
// generation, and adds it to listed. One paused, found newer than the
// listing, or changed meanwhile is left as it is for this cycle.
// The search counts as done once every one is adopted: until then it is
// made again each cycle (the departed owner's listing, short by then).
func (c *cycle) adoptLeft(ctx context.Context, listed map[string]placement.Generation) {
	left := c.others.left
	var ds []doubtful
	for _, u := range slices.Sorted(maps.Keys(left)) {
		if _, _, paused := c.pause(u); !paused && !c.newerThanCycle(u) {
			ds = append(ds, doubtful{u, baremetal.ReservedLeftScope, left[u].gen, ""})
		}
	}
	if len(ds) > 0 {
		c.e.log.Info("providers a departed owner left behind, of nodes the source does not list: reserving and adopting", "count", len(ds))
	}
	reserved := c.reserveDoubts(ctx, ds) // doubt.go
	adopted := 0
	for _, d := range ds {
		if why, _ := c.halted(); why != "" || !reserved[d.uuid] {
			continue
		}
		gen, err := c.flipLeft(ctx, d.uuid, left[d.uuid].owner)
		if err != nil {
			_, kind, _ := classify(err)
			c.fail(kind, d.uuid, fmt.Sprintf("provider %s: left behind by %s, reserved, not adopted: %v", d.uuid, left[d.uuid].owner, err))
			continue
		}
		listed[d.uuid] = gen
		adopted++
	}
	if adopted == len(left) {
		c.quiet.swept(c.others.sweep)
	}
}

// flipLeft replaces owner's marker with this engine's on provider u, at
// the generation read; it refuses when owner no longer marks it.
func (c *cycle) flipLeft(ctx context.Context, u, owner string) (placement.Generation, error) {
	gen, traits, err := c.e.pc.Traits(ctx, u)
	if err != nil {
		return "", err
	}
	if !slices.Contains(traits, owner) || slices.Contains(traits, c.e.pol.OwnerTrait) {
		return "", fmt.Errorf("its owner marker changed meanwhile (traits %v)", traits)
	}
	set, err := c.knownTraits(ctx, []string{c.e.pol.OwnerTrait})
	if err != nil {
		return "", err
	}
	set = sortedSet(append(slices.DeleteFunc(slices.Clone(traits), func(t string) bool { return t == owner }), set...))
	return c.w.SetTraits(ctx, u, gen, set)
}
