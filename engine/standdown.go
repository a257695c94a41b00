package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
)

// RetireGone is stand-down's step for the providers whose node the
// source proves deleted (docs/NOVA.md). Releasing such a node's hold
// alone would leave it to nova, which tried to delete it once, was
// refused while the hold stood, and never tries again (it drops its
// compute node first): the provider would stay, offered by nova's last
// inventory. So each is fully reserved, then its hold released, then,
// with no allocation left, deleted; a step that fails leaves it held or
// reserved, and is returned as an error. Only providers still carrying
// ownerTrait are touched.
func RetireGone(ctx context.Context, pc *placement.Client, ownerTrait string, gone []string) (deleted int, err error) {
	w, err := record.New(pc, nil).Intend(ctx, nil)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, uuid := range gone {
		switch err := retireOne(ctx, pc, w, ownerTrait, uuid); {
		case errors.Is(err, errSkip):
		case err != nil:
			errs = append(errs, fmt.Errorf("provider %s of a deleted node: %w", uuid, err))
		default:
			deleted++
		}
	}
	return deleted, errors.Join(errs...)
}

// errSkip: the provider is gone or no longer ours.
var errSkip = errors.New("not ours")

func retireOne(ctx context.Context, pc *placement.Client, w record.Writer, ownerTrait, uuid string) error {
	gen, traits, err := pc.Traits(ctx, uuid)
	switch {
	case errors.Is(err, placement.ErrNotFound):
		return errSkip
	case err != nil:
		return err
	case !slices.Contains(traits, ownerTrait):
		return errSkip
	}
	_, inv, err := pc.Inventories(ctx, uuid)
	if err != nil {
		return err
	}
	full := make(map[string]placement.Inventory, len(inv))
	for rc, i := range inv {
		i.Reserved = i.Total
		full[rc] = i
	}
	if _, err := w.SetInventories(ctx, uuid, gen, full); err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	if err := w.ReleaseHold(ctx, uuid, HoldConsumer(ownerTrait, uuid)); err != nil && !errors.Is(err, placement.ErrNotFound) {
		return fmt.Errorf("release its hold (it stays reserved): %w", err)
	}
	if err := w.DeleteProvider(ctx, uuid); err != nil && !errors.Is(err, placement.ErrNotFound) {
		return fmt.Errorf("delete (it stays reserved): %w", err)
	}
	return nil
}
