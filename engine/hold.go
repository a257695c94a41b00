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

	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
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

// holdBook serialises the hold phases. What the engine believes
// Placement holds (node -> class) is in the State, so a new process finds
// it in the record; it is checked each cycle against one usage sum of the
// hold project and rebuilt from Placement when they disagree, and against
// the providers with room when the listing moved (holdswap.go), so a
// crash or a hold deleted behind the engine's back costs reads, and a
// schedulable node only until the next cycle.
type holdBook struct {
	mu sync.Mutex
	// seen is the owner listing at the last check of the holds' room
	// (holdswap.go), nil before the first: never changed once kept.
	seen *listingSeen
	// refused are the nodes whose hold another consumer's allocation
	// refused, as of the last cycle (holdoccupied.go); never changed in
	// place once a plan shares it.
	refused map[string]refusal
	// handed are holds handed over to a peer with their nodes (fleet.go),
	// still counted in this engine's usage until the peer adopts them.
	handed map[string]string
}

// clone is a book for a plan (the book itself is in the State's clone).
func (b *holdBook) clone() *holdBook {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &holdBook{seen: b.seen, refused: b.refused, handed: maps.Clone(b.handed)}
}

// placeHolds runs before the syncs. Each hold a listed provider lacks
// (new, or on the node's old class) is written together with the
// inventory it guards in one reshape: written apart, the inventory write
// (nova's reserved 0, or the new class) would offer the node until the
// hold followed. Providers created this cycle get theirs in settleHolds.
func (c *cycle) placeHolds(ctx context.Context, desired []Desired, listed map[string]placement.Generation) {
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	rep := &NovaReport{}
	c.setNova(rep)
	if err := c.checkBook(ctx, desired, listed, rep); err != nil {
		rep.skip = true
		c.fail(ErrPlacement, "", fmt.Sprintf("holds: %v; no hold written this cycle", err))
		return
	}
	held := c.state.heldBook()
	waiting := c.stillOccupied(ctx, desired, listed, held) // holdoccupied.go
	c.holds.refused = waiting
	for _, d := range desired {
		switch {
		case d.Hold == "" || held[d.UUID] == d.Hold || listed[d.UUID] == "":
		case waiting[d.UUID].class == d.Hold:
			rep.Occupied++ // refused at this generation, and still no room
		default:
			c.placeOne(ctx, d, listed[d.UUID], rep)
		}
	}
}

// settleHolds runs after the deletions: it places the holds of providers
// created this cycle and releases those nothing needs any more. A
// quarantined node keeps its hold (bad data loses nothing), and so does a
// node proven gone until its provider is fully reserved or deleted: the
// release must not open a window before the deletion.
func (c *cycle) settleHolds(ctx context.Context, nodes listedNodes, desired []Desired, listed map[string]placement.Generation) {
	rep := c.nova()
	if rep == nil || rep.skip {
		return
	}
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	held := c.state.heldOrPeer() // a peer's hold no longer wanted goes too (fleet.go)
	wanted := make(map[string]bool, len(desired))
	for _, d := range desired {
		if d.Hold == "" {
			continue
		}
		wanted[d.UUID] = true
		if held[d.UUID] != d.Hold && listed[d.UUID] == "" {
			c.placeOne(ctx, d, "", rep)
		}
	}
	c.holdLeft(ctx, held, rep) // holdleft.go
	inScope := make(map[string]bool, len(nodes.inScope))
	for _, u := range nodes.inScope {
		inScope[u] = true
	}
	for _, node := range sortedKeys(held) {
		listedNode := desiredHas(desired, node)
		if wanted[node] || !listedNode && inScope[node] || c.left[node] {
			continue // wanted, quarantined, or left the scope: kept
		}
		if !listedNode && !c.mayRelease(ctx, node) {
			continue
		}
		c.releaseOne(ctx, node, desiredName(desired, node), rep)
	}
	rep.Held = len(c.state.heldBook())
}

// placeOne places or moves d's hold, counting it in rep.
func (c *cycle) placeOne(ctx context.Context, d Desired, gen placement.Generation, rep *NovaReport) {
	if !strings.HasPrefix(d.Hold, "CUSTOM_") {
		// nova's placement audit --delete removes standard-class
		// allocations of consumers that are not instances, and its quota
		// counts them (docs/NOVA.md): never hold one.
		c.fail(ErrInvalidData, d.UUID, fmt.Sprintf("provider %s: no hold on nova's standard class %s", d.UUID, d.Hold))
		return
	}
	ctx, answer := placement.WithAnswerID(ctx)
	switch refused, err := c.placeHold(ctx, d, gen); {
	case err != nil:
		c.fail(ErrPlacement, d.UUID, fmt.Sprintf("provider %s: hold: %v", d.UUID, err))
	case refused == oldClassInUse:
		// Not remembered: the claim leaving moves no generation and
		// lists no room, so the reshape is tried each cycle; meanwhile
		// the sync keeps every class reserved (withRetained).
		rep.Occupied++
	case refused == occupied:
		rep.Occupied++
		c.holds.refuse(d, gen)
	default:
		c.state.setHeld(d.UUID, d.Hold)
		rep.Placed++
		c.log.Info("hold placed", NodeAttrs(d.UUID, d.NodeName, append([]any{"class", d.Hold}, requestIDs(ctx, answer)...)...)...)
	}
}

// mayRelease says whether the hold of a node no longer listed may go: at
// once if the node is not proven gone (it left the scope: handed over),
// else only once its provider is fully reserved (pending deletion) or
// deleted, so that no instant between the two leaves it allocatable.
func (c *cycle) mayRelease(ctx context.Context, node string) bool {
	if k, ok := c.state.get(node); !ok || k.GoneSince.IsZero() {
		return true
	}
	_, inv, err := c.e.pc.Inventories(ctx, node)
	switch {
	case errors.Is(err, placement.ErrNotFound):
		return true
	case err != nil:
		c.fail(ErrPlacement, node, fmt.Sprintf("provider %s: hold kept: %v", node, err))
		return false
	}
	for rc, i := range inv {
		if i.Reserved < i.Total {
			c.e.log.Info("hold kept until the provider of a node proven gone is fully reserved", "node", node, "class", rc)
			return false
		}
	}
	return true
}

// releaseOne deletes one hold consumer of this engine.
func (c *cycle) releaseOne(ctx context.Context, node, name string, rep *NovaReport) {
	ctx, answer := placement.WithAnswerID(ctx)
	err := c.w.ReleaseHold(ctx, node, HoldConsumer(c.e.pol.OwnerTrait, node))
	if err != nil && !errors.Is(err, placement.ErrNotFound) {
		c.fail(ErrPlacement, node, fmt.Sprintf("provider %s: release hold: %v", node, err))
		return
	}
	c.state.dropHeld(node)
	rep.Released++
	c.log.Info("hold released", NodeAttrs(node, name, requestIDs(ctx, answer)...)...)
}

// checkBook compares the book with the hold project's usage (one request)
// and, when they differ, reads the hold consumers back: first of the
// nodes that want one, then, if the sum still differs, of every provider
// the engine knows of.
func (c *cycle) checkBook(ctx context.Context, desired []Desired, listed map[string]placement.Generation, rep *NovaReport) error {
	e := c.e
	used, err := e.pc.ProjectUsage(ctx, e.pol.Nova.HoldProject, e.pol.Nova.HoldUser)
	if err != nil {
		return fmt.Errorf("read the hold project's usage: %w", err)
	}
	book := c.state.heldBook()
	if used != int64(len(book)+len(c.holds.handed)) && len(c.holds.handed) > 0 {
		if err := c.recheckHanded(ctx); err != nil { // fleet.go
			return fmt.Errorf("read a hold handed over: %w", err)
		}
	}
	used -= int64(len(c.holds.handed))
	if used == int64(len(book)) {
		return c.checkRoom(ctx, desired, listed, book) // holdswap.go
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
		if err := c.readHolds(ctx, batch, fresh, rep); err != nil {
			return err
		}
		if int64(countHeld(fresh)) == used {
			break
		}
	}
	maps.DeleteFunc(fresh, func(_, rc string) bool { return rc == "" })
	c.state.setHolds(fresh)
	c.holds.seen = c.keepSeen(desired, listed, fresh)
	if int64(len(fresh)) != used {
		e.log.Warn("hold project usage does not match the holds found; is it used by anything else?",
			"project", e.pol.Nova.HoldProject, "used", used, "holds", len(fresh))
	}
	return nil
}

// readHolds reads the hold consumer of each node not yet in fresh.
func (c *cycle) readHolds(ctx context.Context, nodes []string, fresh map[string]string, rep *NovaReport) error {
	for _, node := range nodes {
		if _, done := fresh[node]; done {
			continue
		}
		held, err := c.e.pc.GetConsumer(ctx, HoldConsumer(c.e.pol.OwnerTrait, node))
		if err != nil {
			return fmt.Errorf("read hold of %s: %w", node, err)
		}
		rep.Scanned++
		fresh[node] = ""
		for rc := range held.Resources[node] {
			if !c.ownsHold(held) {
				c.state.notePeer(node, rc) // a peer's, in the fleet's project (fleet.go)
				continue
			}
			fresh[node] = rc
		}
	}
	return nil
}

// holdRefusal says why Placement refused a hold, when it did.
type holdRefusal int

const (
	notRefused    holdRefusal = iota
	occupied                  // another consumer uses the node's unit of its class
	oldClassInUse             // a consumer still uses the class the node had: the reshape may not drop it
)

// placeHold writes d's hold (new, or moved to d's current class) and d's
// inventory in one reshape. gen is the provider's generation ("" to read
// it). It reports a refusal, and no error, when Placement refuses the hold
// because another consumer already uses the node's unit, of its class or
// of the class it had.
func (c *cycle) placeHold(ctx context.Context, d Desired, gen placement.Generation) (refused holdRefusal, err error) {
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
		if cur.Resources[d.UUID][d.Hold] > 0 && len(cur.Resources) == 1 && c.ownsHold(cur) {
			return nil // already there (placed by an earlier process)
		}
		if gen == "" {
			p, err := e.pc.GetProvider(ctx, d.UUID)
			if err != nil {
				return err
			}
			gen = p.Generation
		}
		want.Generation = cur.Generation
		err = c.reshape(ctx, d, gen, id, want)
		switch {
		case err == nil:
			c.state.invalidate(d.UUID) // its generation moved: the sync reads it again
		case errors.Is(err, placement.ErrConcurrentUpdate):
			gen = ""
		case errors.Is(err, placement.ErrInventoryInUse):
			refused = oldClassInUse
			return nil
		case isConflict(err):
			_, usages, uerr := e.pc.Usages(ctx, d.UUID)
			if uerr == nil && usages[d.Hold] >= d.Inventory[d.Hold].Total {
				refused = occupied
				return nil
			}
		}
		return onConflict(err)
	})
	return refused, err
}

// reshape sends the hold's reshape; a class Placement does not know (a
// class change to a new one; nova usually made it first) is created and
// the reshape sent again, so known classes cost no request.
func (c *cycle) reshape(ctx context.Context, d Desired, gen placement.Generation, id string, want placement.Consumer) error {
	err := c.w.PutHold(ctx, d.UUID, gen, d.Inventory, id, want)
	if !isBadRequest(err) {
		return err
	}
	if cerr := c.ensureClasses(ctx, d.Inventory); cerr != nil {
		return cerr
	}
	return c.w.PutHold(ctx, d.UUID, gen, d.Inventory, id, want)
}

// setNova and nova give the cycle's beside-nova report, under its lock.
func (c *cycle) setNova(rep *NovaReport) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.r.Nova = rep
}

func (c *cycle) nova() *NovaReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.r.Nova
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
	delete(s.peerHolds, node)
	s.shareHold(node)
}

func (s *State) dropHeld(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holds, node)
	delete(s.peerHolds, node)
	s.dirty = true
	s.shareHold(node)
}

// shareHold marks the entry of node's provider to be stored again, when a
// RecordStore holds the record: its hold changed (fleet.go). Under s.mu.
func (s *State) shareHold(node string) {
	if s.shared != nil && s.providers.find(node) {
		s.shared[node] = struct{}{}
	}
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
// It stops once the hold project's usage is zero. Its writer is the
// record's, as every write's: releasing adds nothing to record, and the
// command keeps no state file, so the intent is empty.
func ReleaseHolds(ctx context.Context, pc *placement.Client, ownerTrait, project, user string, providers []string) (int, error) {
	w, err := record.New(pc, nil).Intend(ctx, nil)
	if err != nil {
		return 0, err
	}
	released := 0
	for _, p := range providers {
		used, err := pc.ProjectUsage(ctx, project, user)
		if err != nil {
			return released, err
		}
		if used == 0 {
			break
		}
		err = w.ReleaseHold(ctx, p, HoldConsumer(ownerTrait, p))
		switch {
		case err == nil:
			released++
		case !errors.Is(err, placement.ErrNotFound):
			return released, fmt.Errorf("release hold on %s: %w", p, err)
		}
	}
	return released, nil
}

// desiredName is the source's name of the node uuid among desired
// (sorted by uuid), "" when it is not there.
func desiredName(desired []Desired, uuid string) string {
	i, found := slices.BinarySearchFunc(desired, uuid, func(d Desired, u string) int { return strings.Compare(d.UUID, u) })
	if !found {
		return ""
	}
	return desired[i].NodeName
}
