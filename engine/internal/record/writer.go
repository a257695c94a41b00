package record

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rpengine/rpengine/engine/placement"
)

// Writer is where a run's Placement writes go: to Placement, or into a
// plan's record. Reads always go to Placement. Only Keeper.Intend makes
// one, so the reconcile code never asks which it has: a plan runs the
// same code as a cycle and cannot drift from what a cycle would do.
type Writer interface {
	CreateProvider(ctx context.Context, uuid, name string) (placement.Generation, error)
	SetTraits(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error)
	SetInventories(ctx context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error)
	SetAggregates(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error)
	DeleteProvider(ctx context.Context, uuid string) error
	// CreateName creates a custom trait (kind "trait") or resource class
	// ("rc").
	CreateName(ctx context.Context, kind, name string) error
	// PutHold writes node's hold consumer id and the inventory it guards
	// in one request (a reshape); ReleaseHold deletes the hold.
	PutHold(ctx context.Context, node string, gen placement.Generation, inv map[string]placement.Inventory, id string, c placement.Consumer) error
	ReleaseHold(ctx context.Context, node, id string) error
	// Recorded is the writes recorded for node, All every one, each
	// node's together in the order of their first write: nil when the
	// writes were sent.
	Recorded(node string) []Write
	All() []Write
}

// sender sends the writes. It is unexported so that Intend is the only
// way to have one.
type sender struct{ pc *placement.Client }

func (w sender) CreateProvider(ctx context.Context, uuid, name string) (placement.Generation, error) {
	p, err := w.pc.CreateProvider(ctx, uuid, name)
	return p.Generation, err
}

func (w sender) SetTraits(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	return w.pc.SetTraits(ctx, uuid, gen, set)
}

func (w sender) SetInventories(ctx context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error) {
	return w.pc.SetInventories(ctx, uuid, gen, inv)
}

func (w sender) SetAggregates(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	return w.pc.SetAggregates(ctx, uuid, gen, set)
}

func (w sender) DeleteProvider(ctx context.Context, uuid string) error {
	return w.pc.DeleteProvider(ctx, uuid)
}

func (w sender) CreateName(ctx context.Context, kind, name string) error {
	if kind == "rc" {
		return w.pc.EnsureResourceClass(ctx, name)
	}
	return w.pc.EnsureTrait(ctx, name)
}

func (w sender) PutHold(ctx context.Context, node string, gen placement.Generation, inv map[string]placement.Inventory,
	id string, c placement.Consumer) error {
	return w.pc.Reshape(ctx, node, gen, inv, id, c)
}

func (w sender) ReleaseHold(ctx context.Context, _, id string) error {
	return w.pc.DeleteConsumer(ctx, id)
}

func (sender) Recorded(string) []Write { return nil }
func (sender) All() []Write            { return nil }

// plan records the writes, node by node, and sends nothing. Each
// succeeds and leaves the generation as it was. The names it would
// create are not recorded: they are no provider's change.
type plan struct {
	pc     *placement.Client // reads only: what a create would collide with
	mu     sync.Mutex
	order  []string // nodes, in the order of their first write
	byNode map[string][]Write
	taken  taken
}

// taken is every provider's uuid and name, listed once at a plan's first
// create: a create's collisions are then looked up, not asked for (two
// GETs per provider, 2,000 at 1,000 nodes, where the cycle it predicts
// reads 6 times in all).
type taken struct {
	mu           sync.Mutex
	listed       bool
	uuids, names map[string]struct{}
}

func (p *plan) record(w Write) {
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

func (p *plan) Recorded(node string) []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.byNode[node])
}

func (p *plan) All() []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Write
	for _, n := range p.order {
		out = append(out, p.byNode[n]...)
	}
	return out
}

func (p *plan) CreateProvider(ctx context.Context, uuid, name string) (placement.Generation, error) {
	if err := p.wouldCollide(ctx, uuid, name); err != nil {
		return "", err
	}
	p.record(Write{Op: OpCreate, UUID: uuid, Name: name})
	return "", nil
}

// wouldCollide answers as Placement would answer the create: 409
// duplicate_name when a provider holds the uuid or the name (another
// engine's, nova's). The plan then takes the cycle's own path from that
// answer instead of predicting a create the cycle would see refused.
func (p *plan) wouldCollide(ctx context.Context, uuid, name string) error {
	if p.pc == nil {
		return nil
	}
	t := &p.taken
	t.mu.Lock() // the other creates wait for the one listing
	defer t.mu.Unlock()
	if !t.listed {
		all, err := p.pc.ListProviders(ctx, nil)
		if err != nil {
			return err // listed again at the next create, as a GET was sent again
		}
		t.uuids, t.names = make(map[string]struct{}, len(all)), make(map[string]struct{}, len(all))
		for _, rp := range all {
			t.uuids[rp.UUID], t.names[rp.Name] = struct{}{}, struct{}{}
		}
		t.listed = true
	}
	if _, ok := t.uuids[uuid]; ok {
		return fmt.Errorf("provider %s exists: %w", uuid, placement.ErrDuplicateName)
	}
	if _, ok := t.names[name]; ok {
		return fmt.Errorf("provider name %s is taken: %w", name, placement.ErrDuplicateName)
	}
	return nil
}

func (p *plan) SetTraits(_ context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	p.record(Write{Op: OpTraits, UUID: uuid, Traits: set})
	return gen, nil
}

func (p *plan) SetInventories(_ context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error) {
	p.record(Write{Op: OpInventory, UUID: uuid, Inventory: inv})
	return gen, nil
}

func (p *plan) SetAggregates(_ context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	p.record(Write{Op: OpAggregates, UUID: uuid, Aggregates: set})
	return gen, nil
}

func (p *plan) DeleteProvider(_ context.Context, uuid string) error {
	p.record(Write{Op: OpDelete, UUID: uuid})
	return nil
}

func (p *plan) CreateName(context.Context, string, string) error { return nil }

func (p *plan) PutHold(_ context.Context, node string, _ placement.Generation, _ map[string]placement.Inventory,
	_ string, c placement.Consumer) error {
	w := Write{Op: OpHold, UUID: node}
	for rc := range c.Resources[node] {
		w.Name = rc
	}
	p.record(w)
	return nil
}

func (p *plan) ReleaseHold(_ context.Context, node, _ string) error {
	p.record(Write{Op: OpReleaseHold, UUID: node})
	return nil
}
