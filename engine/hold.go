package engine

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// Holds keep a node the engine reserves, and nova-compute does not, off
// the scheduler without writing the provider's inventory (which nova
// rewrites): one allocation of the node's whole class by a consumer of the
// engine's own. Placement's scheduler honours it like any consumer; nova's
// resource tracker leaves consumers that are not its instances alone
// (resource_tracker.py: _remove_deleted_instances_allocations skips a
// consumer not found as an instance). See docs/NOVA.md.
//
// The engine never touches any other consumer: it writes and deletes only
// uuids HoldConsumer derives from its own owner marker.

// HoldConsumerType is the consumer_type of hold allocations (1.38+).
const HoldConsumerType = "RPENGINE_HOLD"

// Hold writes, as a plan reports them.
const (
	OpHold        Op = "hold"
	OpReleaseHold Op = "release_hold"
)

// HoldConsumer is the hold consumer's uuid for one node: a name-based
// (version 5, SHA-1) uuid of the engine's owner marker and the node's
// uuid, so any process of this engine finds its holds again in Placement
// with no memory, and two engines never share one.
func HoldConsumer(ownerTrait, node string) string {
	h := sha1.Sum([]byte("rpengine-hold/" + ownerTrait + "/" + node))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// holdBook is what the engine believes Placement holds: node -> class.
// It is checked each cycle against one usage sum of the hold project and
// rebuilt from Placement when they disagree, so a crash or a hold deleted
// behind the engine's back costs reads, never a schedulable node.
type holdBook struct {
	mu   sync.Mutex
	held map[string]string
}

// clone copies the book, for a plan.
func (b *holdBook) clone() *holdBook {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &holdBook{held: maps.Clone(b.held)}
}

// syncHolds makes the holds match desired: places a hold where d.Hold is
// set, moves it when the class changed, releases it where nothing needs it
// or the node left the listing or the scope. A quarantined node keeps its
// hold: bad data from the source loses nothing.
func (c *cycle) syncHolds(ctx context.Context, nodes []hostabi.Node, desired []Desired, listed map[string]placement.Generation) {
	b := c.holds
	b.mu.Lock()
	defer b.mu.Unlock()
	rep := &NovaReport{}
	c.r.Nova = rep
	if err := c.checkBook(ctx, desired, listed, rep); err != nil {
		c.fail(ErrPlacement, "", fmt.Sprintf("holds: %v; no hold written this cycle", err))
		return
	}
	wanted := c.placeHolds(ctx, desired, rep)
	inScope := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if c.e.pol.Scope.Contains(n) {
			inScope[strings.ToLower(n.UUID)] = true
		}
	}
	for _, node := range sortedKeys(b.held) {
		if wanted[node] || !desiredHas(desired, node) && inScope[node] {
			continue // wanted, or quarantined: kept
		}
		err := c.w.releaseHold(ctx, node, HoldConsumer(c.e.pol.OwnerTrait, node))
		if err != nil && !errors.Is(err, placement.ErrNotFound) {
			c.fail(ErrPlacement, node, fmt.Sprintf("provider %s: release hold: %v", node, err))
			continue
		}
		delete(b.held, node)
		rep.Released++
		c.e.log.Info("hold released", "node", node)
	}
	rep.Held = len(b.held)
}

// placeHolds places or moves the holds desired wants, and returns the
// nodes that want one. The caller holds the book's lock.
func (c *cycle) placeHolds(ctx context.Context, desired []Desired, rep *NovaReport) map[string]bool {
	b := c.holds
	wanted := make(map[string]bool, len(desired))
	for _, d := range desired {
		if d.Hold == "" {
			continue
		}
		wanted[d.UUID] = true
		if b.held[d.UUID] == d.Hold {
			continue
		}
		switch occupied, err := c.placeHold(ctx, d); {
		case err != nil:
			c.fail(ErrPlacement, d.UUID, fmt.Sprintf("provider %s: hold: %v", d.UUID, err))
		case occupied:
			rep.Occupied++
		default:
			b.held[d.UUID] = d.Hold
			rep.Placed++
			c.e.log.Info("hold placed", "node", d.UUID, "class", d.Hold)
		}
	}
	return wanted
}

// checkBook compares the book with the hold project's usage (one request)
// and, when they differ, reads the hold consumers back: first of the
// nodes that want one, then, if the sum still differs, of every provider
// the engine knows of.
func (c *cycle) checkBook(ctx context.Context, desired []Desired, listed map[string]placement.Generation, rep *NovaReport) error {
	e, b := c.e, c.holds
	if b.held == nil {
		b.held = map[string]string{}
	}
	used, err := e.pc.ProjectUsage(ctx, e.pol.Nova.HoldProject, e.pol.Nova.HoldUser)
	if err != nil {
		return fmt.Errorf("read the hold project's usage: %w", err)
	}
	if used == int64(len(b.held)) {
		return nil
	}
	var first, rest []string
	for _, d := range desired {
		if d.Hold != "" {
			first = append(first, d.UUID)
		} else {
			rest = append(rest, d.UUID)
		}
	}
	for uuid := range listed {
		rest = append(rest, uuid)
	}
	rest = append(rest, sortedKeys(b.held)...)
	fresh := map[string]string{}
	for _, batch := range [][]string{first, rest} {
		for _, node := range batch {
			if _, done := fresh[node]; done {
				continue
			}
			held, err := e.pc.GetConsumer(ctx, HoldConsumer(e.pol.OwnerTrait, node))
			if err != nil {
				return fmt.Errorf("read hold of %s: %w", node, err)
			}
			rep.Scanned++
			fresh[node] = ""
			for rc := range held.Resources[node] {
				fresh[node] = rc
			}
		}
		if int64(countHeld(fresh)) == used {
			break
		}
	}
	b.held = map[string]string{}
	for node, rc := range fresh {
		if rc != "" {
			b.held[node] = rc
		}
	}
	if int64(len(b.held)) != used {
		e.log.Warn("hold project usage does not match the holds found; is it used by anything else?",
			"project", e.pol.Nova.HoldProject, "used", used, "holds", len(b.held))
	}
	return nil
}

// placeHold writes d's hold (new, or moved to d's current class). It
// reports occupied, and no error, when Placement refuses it because
// another consumer already uses the node's unit.
func (c *cycle) placeHold(ctx context.Context, d Desired) (occupied bool, err error) {
	e := c.e
	id := HoldConsumer(e.pol.OwnerTrait, d.UUID)
	want := placement.Consumer{
		Resources: map[string]map[string]int64{d.UUID: {d.Hold: d.Inventory[d.Hold].Total}},
		ProjectID: e.pol.Nova.HoldProject, UserID: e.pol.Nova.HoldUser, Type: HoldConsumerType,
	}
	err = e.retryOnConflict(ctx, func() error {
		cur, err := e.pc.GetConsumer(ctx, id)
		if err != nil {
			return err
		}
		if cur.Resources[d.UUID][d.Hold] > 0 && len(cur.Resources) == 1 {
			return nil // already there (placed by an earlier process)
		}
		want.Generation = cur.Generation
		err = c.w.putHold(ctx, d.UUID, id, want)
		if isConflict(err) && !errors.Is(err, placement.ErrConcurrentUpdate) {
			_, usages, uerr := e.pc.Usages(ctx, d.UUID)
			if occupied = uerr == nil && usages[d.Hold] >= d.Inventory[d.Hold].Total; occupied {
				return nil
			}
		}
		return onConflict(err)
	})
	return occupied, err
}

func isConflict(err error) bool {
	var api *placement.APIError
	return errors.As(err, &api) && api.Status == 409
}

func desiredHas(desired []Desired, uuid string) bool {
	_, found := slices.BinarySearchFunc(desired, uuid, func(d Desired, u string) int {
		switch {
		case d.UUID < u:
			return -1
		case d.UUID > u:
			return 1
		}
		return 0
	})
	return found
}

func countHeld(m map[string]string) int {
	n := 0
	for _, rc := range m {
		if rc != "" {
			n++
		}
	}
	return n
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ReleaseHolds deletes this engine's hold consumers on the given
// providers, for standing down beside nova (docs/NOVA.md): nothing else.
// It stops once the hold project's usage is zero.
func ReleaseHolds(ctx context.Context, pc *placement.Client, ownerTrait, project, user string, providers []string) (int, error) {
	released := 0
	for _, p := range providers {
		used, err := pc.ProjectUsage(ctx, project, user)
		if err != nil {
			return released, err
		}
		if used == 0 {
			break
		}
		err = pc.DeleteConsumer(ctx, HoldConsumer(ownerTrait, p))
		switch {
		case err == nil:
			released++
		case !errors.Is(err, placement.ErrNotFound):
			return released, fmt.Errorf("release hold on %s: %w", p, err)
		}
	}
	return released, nil
}
