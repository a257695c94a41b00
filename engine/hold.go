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

// Hold writes, as plan (dry run) reports them.
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

// NovaReport is what beside-nova mode did in one cycle.
type NovaReport struct {
	// Held counts the holds in place after the cycle.
	Held     int `json:"held"`
	Placed   int `json:"placed"`
	Released int `json:"released"`
	// Occupied counts nodes that wanted a hold but whose unit another
	// consumer (an instance) already uses: unschedulable all the same.
	Occupied int `json:"occupied,omitempty"`
	// Scanned counts hold consumers read to rebuild the book from
	// Placement (usage that did not add up, or no book in the record).
	Scanned int  `json:"scanned,omitempty"`
	skip    bool // the book could not be checked: no hold written this cycle
}

// holdBook serialises the hold phases. What the engine believes
// Placement holds (node -> class) is in the State, so a new process finds
// it there (the record); it is checked each cycle against one usage sum
// of the hold project and rebuilt from Placement when they disagree, so a
// crash or a hold deleted behind the engine's back costs reads, never a
// schedulable node.
type holdBook struct {
	mu sync.Mutex
}

// placeHolds runs before the syncs. Each hold a listed provider lacks
// (new, or on the node's old class) is written together with the
// inventory it guards in one reshape: written apart, the inventory write
// (nova's reserved 0, or the new class) would offer the node until the
// hold followed. Providers created this cycle get theirs in settleHolds.
func (e *Engine) placeHolds(ctx context.Context, desired []Desired, listed map[string]placement.Generation, dry bool, r *Report) {
	e.holds.mu.Lock()
	defer e.holds.mu.Unlock()
	rep := &NovaReport{}
	r.Nova = rep
	if err := e.checkBook(ctx, desired, listed, rep); err != nil {
		rep.skip = true
		r.fail(ErrPlacement, "", fmt.Sprintf("holds: %v; no hold written this cycle", err))
		return
	}
	held := e.state.heldBook()
	for _, d := range desired {
		if d.Hold != "" && held[d.UUID] != d.Hold && listed[d.UUID] != "" {
			e.placeOne(ctx, d, listed[d.UUID], dry, r)
		}
	}
}

// settleHolds runs after the deletions: it places the holds of providers
// created this cycle and releases those nothing needs any more. A
// quarantined node keeps its hold (bad data loses nothing), and so does a
// node proven gone until its provider is fully reserved or deleted: the
// release must not open a window before the deletion.
func (e *Engine) settleHolds(ctx context.Context, nodes []hostabi.Node, desired []Desired,
	listed map[string]placement.Generation, dry bool, r *Report) {
	rep := r.Nova
	if rep == nil || rep.skip {
		return
	}
	e.holds.mu.Lock()
	defer e.holds.mu.Unlock()
	held := e.state.heldBook()
	wanted := make(map[string]bool, len(desired))
	for _, d := range desired {
		if d.Hold == "" {
			continue
		}
		wanted[d.UUID] = true
		if held[d.UUID] != d.Hold && listed[d.UUID] == "" {
			e.placeOne(ctx, d, "", dry, r)
		}
	}
	inScope := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if e.pol.Scope.Contains(n) {
			inScope[strings.ToLower(n.UUID)] = true
		}
	}
	for _, node := range sortedKeys(held) {
		listedNode := desiredHas(desired, node)
		if wanted[node] || !listedNode && inScope[node] {
			continue // wanted, or quarantined: kept
		}
		if dry {
			r.Writes = append(r.Writes, Write{Op: OpReleaseHold, UUID: node})
			continue
		}
		if !listedNode && !e.mayRelease(ctx, node, r) {
			continue
		}
		e.releaseOne(ctx, node, r)
	}
	rep.Held = len(e.state.heldBook())
}

// placeOne places or moves d's hold, counting it in r.
func (e *Engine) placeOne(ctx context.Context, d Desired, gen placement.Generation, dry bool, r *Report) {
	if !strings.HasPrefix(d.Hold, "CUSTOM_") {
		// nova's placement audit --delete removes standard-class
		// allocations of consumers that are not instances, and its quota
		// counts them (docs/NOVA.md): never hold one.
		r.fail(ErrInvalidData, d.UUID, fmt.Sprintf("provider %s: no hold on nova's standard class %s", d.UUID, d.Hold))
		return
	}
	if dry {
		r.Writes = append(r.Writes, Write{Op: OpHold, UUID: d.UUID, Name: d.Hold})
		return
	}
	switch occupied, err := e.placeHold(ctx, d, gen); {
	case err != nil:
		r.fail(ErrPlacement, d.UUID, fmt.Sprintf("provider %s: hold: %v", d.UUID, err))
	case occupied:
		r.Nova.Occupied++
	default:
		e.state.setHeld(d.UUID, d.Hold)
		r.Nova.Placed++
		e.log.Info("hold placed", "node", d.UUID, "class", d.Hold)
	}
}

// mayRelease says whether the hold of a node no longer listed may go: at
// once if the node is not proven gone (it left the scope: handed over),
// else only once its provider is fully reserved (pending deletion) or
// deleted, so that no instant between the two leaves it allocatable.
func (e *Engine) mayRelease(ctx context.Context, node string, r *Report) bool {
	if k, ok := e.state.get(node); !ok || k.GoneSince.IsZero() {
		return true
	}
	_, inv, err := e.pc.Inventories(ctx, node)
	switch {
	case errors.Is(err, placement.ErrNotFound):
		return true
	case err != nil:
		r.fail(ErrPlacement, node, fmt.Sprintf("provider %s: hold kept: %v", node, err))
		return false
	}
	for rc, i := range inv {
		if i.Reserved < i.Total {
			e.log.Info("hold kept until the provider of a node proven gone is fully reserved", "node", node, "class", rc)
			return false
		}
	}
	return true
}

// releaseOne deletes one hold consumer of this engine.
func (e *Engine) releaseOne(ctx context.Context, node string, r *Report) {
	err := e.pc.DeleteConsumer(ctx, HoldConsumer(e.pol.OwnerTrait, node))
	if err != nil && !errors.Is(err, placement.ErrNotFound) {
		r.fail(ErrPlacement, node, fmt.Sprintf("provider %s: release hold: %v", node, err))
		return
	}
	e.state.dropHeld(node)
	r.Nova.Released++
	e.log.Info("hold released", "node", node)
}

// checkBook compares the book with the hold project's usage (one request)
// and, when they differ, reads the hold consumers back: first of the
// nodes that want one, then, if the sum still differs, of every provider
// the engine knows of.
func (e *Engine) checkBook(ctx context.Context, desired []Desired, listed map[string]placement.Generation, rep *NovaReport) error {
	used, err := e.pc.ProjectUsage(ctx, e.pol.Nova.HoldProject, e.pol.Nova.HoldUser)
	if err != nil {
		return fmt.Errorf("read the hold project's usage: %w", err)
	}
	book := e.state.heldBook()
	if used == int64(len(book)) {
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
	rest = append(rest, sortedKeys(book)...)
	fresh := map[string]string{}
	for _, batch := range [][]string{first, rest} {
		if err := e.readHolds(ctx, batch, fresh, rep); err != nil {
			return err
		}
		if int64(countHeld(fresh)) == used {
			break
		}
	}
	maps.DeleteFunc(fresh, func(_, rc string) bool { return rc == "" })
	e.state.setHolds(fresh)
	if int64(len(fresh)) != used {
		e.log.Warn("hold project usage does not match the holds found; is it used by anything else?",
			"project", e.pol.Nova.HoldProject, "used", used, "holds", len(fresh))
	}
	return nil
}

// readHolds reads the hold consumer of each node not yet in fresh.
func (e *Engine) readHolds(ctx context.Context, nodes []string, fresh map[string]string, rep *NovaReport) error {
	for _, node := range nodes {
		if _, done := fresh[node]; done {
			continue
		}
		c, err := e.pc.GetConsumer(ctx, HoldConsumer(e.pol.OwnerTrait, node))
		if err != nil {
			return fmt.Errorf("read hold of %s: %w", node, err)
		}
		rep.Scanned++
		fresh[node] = ""
		for rc := range c.Resources[node] {
			fresh[node] = rc
		}
	}
	return nil
}

// placeHold writes d's hold (new, or moved to d's current class) and d's
// inventory in one reshape. gen is the provider's generation ("" to read
// it). It reports occupied, and no error, when Placement refuses the hold
// because another consumer already uses the node's unit.
func (e *Engine) placeHold(ctx context.Context, d Desired, gen placement.Generation) (occupied bool, err error) {
	id := HoldConsumer(e.pol.OwnerTrait, d.UUID)
	want := placement.Consumer{
		Resources: map[string]map[string]int64{d.UUID: {d.Hold: d.Inventory[d.Hold].Total}},
		ProjectID: e.pol.Nova.HoldProject, UserID: e.pol.Nova.HoldUser, Type: HoldConsumerType,
	}
	for attempt := 1; ; attempt++ {
		cur, err := e.pc.GetConsumer(ctx, id)
		if err != nil {
			return false, err
		}
		if cur.Resources[d.UUID][d.Hold] > 0 && len(cur.Resources) == 1 {
			return false, nil // already there (placed by an earlier process)
		}
		if gen == "" {
			p, err := e.pc.GetProvider(ctx, d.UUID)
			if err != nil {
				return false, err
			}
			gen = p.Generation
		}
		want.Generation = cur.Generation
		err = e.reshape(ctx, d, gen, id, want)
		switch {
		case err == nil:
			e.state.invalidate(d.UUID) // its generation moved: the sync reads it again
			return false, nil
		case errors.Is(err, placement.ErrConcurrentUpdate) && attempt < e.opts.MaxAttempts:
			gen = ""
			continue
		case isConflict(err) && !errors.Is(err, placement.ErrInventoryInUse):
			_, usages, uerr := e.pc.Usages(ctx, d.UUID)
			if uerr == nil && usages[d.Hold] >= d.Inventory[d.Hold].Total {
				return true, nil
			}
		}
		return false, err
	}
}

// reshape sends the hold's reshape; a class Placement does not know (a
// class change to a new one; nova usually made it first) is created and
// the reshape sent again, so known classes cost no request.
func (e *Engine) reshape(ctx context.Context, d Desired, gen placement.Generation, id string, want placement.Consumer) error {
	err := e.pc.Reshape(ctx, d.UUID, gen, d.Inventory, id, want)
	if !isBadRequest(err) {
		return err
	}
	if cerr := e.ensureClasses(ctx, d.Inventory); cerr != nil {
		return cerr
	}
	return e.pc.Reshape(ctx, d.UUID, gen, d.Inventory, id, want)
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

// heldBook is a copy of the book of holds.
func (s *State) heldBook() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.holds)
}

func (s *State) setHolds(m map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !maps.Equal(s.holds, m) {
		s.holds, s.dirty = m, true
	}
}

func (s *State) setHeld(node, class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == nil {
		s.holds = map[string]string{}
	}
	s.holds[node], s.dirty = class, true
}

func (s *State) dropHeld(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holds, node)
	s.dirty = true
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
