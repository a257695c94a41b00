package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/rpengine/rpengine/engine/placement"
)

// writer is where a cycle's Placement writes go: to Placement
// (placementWriter), or into a plan's record (planWriter). Reads always
// go to Placement. The reconcile code never asks which: a plan runs the
// same code as a cycle, over a copy of the state (Engine.Plan), so it
// cannot drift from what a cycle would do.
type writer interface {
	createProvider(ctx context.Context, uuid, name string) (placement.Generation, error)
	setTraits(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error)
	setInventories(ctx context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error)
	setAggregates(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error)
	deleteProvider(ctx context.Context, uuid string) error
	// createName creates a custom trait (kind "trait") or resource class
	// ("rc").
	createName(ctx context.Context, kind, name string) error
	// putHold writes node's hold consumer id and the inventory it guards
	// in one request (a reshape); releaseHold deletes the hold (hold.go).
	putHold(ctx context.Context, node string, gen placement.Generation, inv map[string]placement.Inventory, id string, c placement.Consumer) error
	releaseHold(ctx context.Context, node, id string) error
}

// placementWriter sends the writes.
type placementWriter struct{ pc *placement.Client }

func (w placementWriter) createProvider(ctx context.Context, uuid, name string) (placement.Generation, error) {
	p, err := w.pc.CreateProvider(ctx, uuid, name)
	return p.Generation, err
}

func (w placementWriter) setTraits(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	return w.pc.SetTraits(ctx, uuid, gen, set)
}

func (w placementWriter) setInventories(ctx context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error) {
	return w.pc.SetInventories(ctx, uuid, gen, inv)
}

func (w placementWriter) setAggregates(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	return w.pc.SetAggregates(ctx, uuid, gen, set)
}

func (w placementWriter) deleteProvider(ctx context.Context, uuid string) error {
	return w.pc.DeleteProvider(ctx, uuid)
}

func (w placementWriter) createName(ctx context.Context, kind, name string) error {
	if kind == "rc" {
		return w.pc.EnsureResourceClass(ctx, name)
	}
	return w.pc.EnsureTrait(ctx, name)
}

func (w placementWriter) putHold(ctx context.Context, node string, gen placement.Generation, inv map[string]placement.Inventory,
	id string, c placement.Consumer) error {
	return w.pc.Reshape(ctx, node, gen, inv, id, c)
}

func (w placementWriter) releaseHold(ctx context.Context, _, id string) error {
	return w.pc.DeleteConsumer(ctx, id)
}

// planWriter records the writes, node by node, and sends nothing. Each
// succeeds and leaves the generation as it was, so a plan emits no
// ProviderWritten event. The names it would create are not recorded:
// they are no provider's change.
type planWriter struct {
	pc     *placement.Client // reads only: what a create would collide with
	mu     sync.Mutex
	order  []string // nodes, in the order of their first write
	byNode map[string][]Write
}

func (p *planWriter) record(w Write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byNode == nil {
		p.byNode = map[string][]Write{}
	}
	if _, ok := p.byNode[w.UUID]; !ok {
		p.order = append(p.order, w.UUID)
	}
	p.byNode[w.UUID] = append(p.byNode[w.UUID], w)
}

// of returns the writes recorded for node.
func (p *planWriter) of(node string) []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.byNode[node])
}

// all returns every write, each node's together, in the order of their
// first write.
func (p *planWriter) all() []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Write
	for _, n := range p.order {
		out = append(out, p.byNode[n]...)
	}
	return out
}

func (p *planWriter) createProvider(ctx context.Context, uuid, name string) (placement.Generation, error) {
	if err := p.wouldCollide(ctx, uuid, name); err != nil {
		return "", err
	}
	p.record(Write{Op: OpCreate, UUID: uuid, Name: name})
	return "", nil
}

// wouldCollide answers as Placement would answer the create: 409
// duplicate_name when a provider holds the uuid or the name (another
// engine's, nova's). The plan then takes the cycle's own path from that
// answer (classify, then ownProvider) instead of predicting a create the
// cycle would see refused.
func (p *planWriter) wouldCollide(ctx context.Context, uuid, name string) error {
	if p.pc == nil {
		return nil
	}
	_, err := p.pc.GetProvider(ctx, uuid)
	if err == nil {
		return fmt.Errorf("provider %s exists: %w", uuid, placement.ErrDuplicateName)
	}
	if !errors.Is(err, placement.ErrNotFound) {
		return err
	}
	same, err := p.pc.ListProviders(ctx, url.Values{"name": {name}})
	if err != nil {
		return err
	}
	if len(same) > 0 {
		return fmt.Errorf("provider name %s is taken: %w", name, placement.ErrDuplicateName)
	}
	return nil
}

func (p *planWriter) setTraits(_ context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	p.record(Write{Op: OpTraits, UUID: uuid, Traits: set})
	return gen, nil
}

func (p *planWriter) setInventories(_ context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error) {
	p.record(Write{Op: OpInventory, UUID: uuid, Inventory: inv})
	return gen, nil
}

func (p *planWriter) setAggregates(_ context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	p.record(Write{Op: OpAggregates, UUID: uuid, Aggregates: set})
	return gen, nil
}

func (p *planWriter) deleteProvider(_ context.Context, uuid string) error {
	p.record(Write{Op: OpDelete, UUID: uuid})
	return nil
}

func (p *planWriter) createName(context.Context, string, string) error { return nil }

func (p *planWriter) putHold(_ context.Context, node string, _ placement.Generation, _ map[string]placement.Inventory,
	_ string, c placement.Consumer) error {
	w := Write{Op: OpHold, UUID: node}
	for rc := range c.Resources[node] {
		w.Name = rc
	}
	p.record(w)
	return nil
}

func (p *planWriter) releaseHold(_ context.Context, node, _ string) error {
	p.record(Write{Op: OpReleaseHold, UUID: node})
	return nil
}

// recorded returns the writes a plan recorded for node (nil when the
// cycle writes to Placement).
func (c *cycle) recorded(node string) []Write {
	if c.plan == nil {
		return nil
	}
	return c.plan.of(node)
}
