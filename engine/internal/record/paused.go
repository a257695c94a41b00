package record

import (
	"context"
	"errors"

	"github.com/rpengine/rpengine/engine/placement"
)

// ErrPaused refuses a write to a provider an operator paused (engine
// pause): the writer the record hands out sends nothing to it, whatever
// step asks, so an operator's change to it stays.
var ErrPaused = errors.New("paused by an operator (engine pause): not written")

// guarded is a Writer that refuses every write to a paused provider.
type guarded struct {
	Writer
	paused func(uuid string) bool
}

func (g guarded) CreateProvider(ctx context.Context, uuid, name string) (placement.Generation, error) {
	if g.paused(uuid) {
		return "", ErrPaused
	}
	return g.Writer.CreateProvider(ctx, uuid, name)
}

func (g guarded) SetTraits(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	if g.paused(uuid) {
		return "", ErrPaused
	}
	return g.Writer.SetTraits(ctx, uuid, gen, set)
}

func (g guarded) SetInventories(ctx context.Context, uuid string, gen placement.Generation, inv map[string]placement.Inventory) (placement.Generation, error) {
	if g.paused(uuid) {
		return "", ErrPaused
	}
	return g.Writer.SetInventories(ctx, uuid, gen, inv)
}

func (g guarded) SetAggregates(ctx context.Context, uuid string, gen placement.Generation, set []string) (placement.Generation, error) {
	if g.paused(uuid) {
		return "", ErrPaused
	}
	return g.Writer.SetAggregates(ctx, uuid, gen, set)
}

func (g guarded) DeleteProvider(ctx context.Context, uuid string) error {
	if g.paused(uuid) {
		return ErrPaused
	}
	return g.Writer.DeleteProvider(ctx, uuid)
}

func (g guarded) PutHold(ctx context.Context, node string, gen placement.Generation, inv map[string]placement.Inventory,
	id string, c placement.Consumer) error {
	if g.paused(node) {
		return ErrPaused
	}
	return g.Writer.PutHold(ctx, node, gen, inv, id, c)
}

func (g guarded) ReleaseHold(ctx context.Context, node, id string) error {
	if g.paused(node) {
		return ErrPaused
	}
	return g.Writer.ReleaseHold(ctx, node, id)
}
