package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// outcome of syncing one provider.
type outcome int

const (
	unchanged outcome = iota
	created
	updated
)

// syncOne makes one provider match d. listed is the generation from this
// cycle's listing, or "" if the provider was not listed. On a generation
// conflict it re-reads the provider and plans again from the fresh state,
// with backoff, up to MaxAttempts; on 404 it recreates the provider.
func (e *Engine) syncOne(ctx context.Context, d Desired, listed placement.Generation, dry bool) (outcome, []Write, int, error) {
	if err := e.quiet.leftAlone(d.UUID, e.mayTakeOver); err != nil {
		return unchanged, nil, 0, err // another's, unchanged since read: no request
	}
	exists, adopting := listed != "", false
	conflicts := 0
	seen, _ := e.state.get(d.UUID) // before this cycle: to see another writer's rewrite
	counted := false
	for attempt := 1; ; attempt++ {
		// The first time, the entry is still seen: one lookup, not three
		// (the state lock and map were a tenth of an idle cycle).
		prev := seen
		if attempt > 1 {
			prev, _ = e.state.get(d.UUID)
		}
		o, fresh, err := e.observe(ctx, d.UUID, exists, listed, prev)
		if errors.Is(err, placement.ErrNotFound) {
			exists, listed = false, ""
			continue
		}
		if err != nil {
			return unchanged, nil, conflicts, err
		}
		if !adopting && o.Exists && !slices.Contains(o.Traits, e.pol.OwnerTrait) {
			// Re-read after a conflict: another engine took it over meanwhile
			// (a hand-over); writing now would put two owner markers on it.
			if owner := foreignOwner(o.Traits, e.pol.OwnerTrait); owner != "" {
				e.quiet.sawForeign(d.UUID, owner, o.Generation)
				return unchanged, nil, conflicts, fmt.Errorf("provider %s was taken over by %s: %w", d.UUID, owner, errOwned)
			}
		}
		if adopting {
			owner := foreignOwner(o.Traits, e.pol.OwnerTrait)
			if owner != "" && !e.mayTakeOver(owner) {
				e.quiet.sawForeign(d.UUID, owner, o.Generation)
				return unchanged, nil, conflicts, fmt.Errorf("provider %s exists and is owned by %s: %w", d.UUID, owner, errOwned)
			}
			if owner != "" {
				// The marker flips in one generation-checked write: if the
				// old owner writes first, this fails and is retried.
				prev.Managed.Traits = append(slices.Clone(prev.Managed.Traits), owner)
				e.log.Info("taking over provider", "node", d.UUID, "from", owner)
			}
		}
		retained := prev.Retained
		// Usages are re-read even when the generation says unchanged:
		// DELETE /allocations frees a class without bumping it.
		if len(retained) > 0 && o.Exists && !dry {
			if retained, err = e.stillInUse(ctx, d, o); err != nil {
				return unchanged, nil, conflicts, err
			}
		}
		if slices.ContainsFunc(d.Traits, e.pc.KnownUnknown) { // shared slices: clone first
			d.Traits = slices.DeleteFunc(slices.Clone(d.Traits), e.pc.KnownUnknown)
		}
		ws := Plan(withRetained(d, retained, o), o, prev.Managed)
		if fresh && !dry && !counted && foreignRewrite(seen, o, ws) {
			counted = true
			e.foreign.Add(1)
		}
		if dry {
			e.synced(d, o, o, ws, dry)
			return planned(o, ws), ws, conflicts, nil
		}
		after, err := e.apply(ctx, d, o, ws)
		if err != nil && (fresh || after.Generation != o.Generation) {
			// What was read and written before the failure still holds (a
			// cache entry is used only while its generation is listed): a
			// 5xx on the last write must not cost three reads next cycle.
			e.state.update(d.UUID, func(k *known) { k.Observed = after })
		}
		switch {
		case err == nil:
			now := known{Observed: after, Retained: retained, Managed: Managed{Traits: d.Traits, Aggregates: d.Aggregates},
				Plugin: e.opts.Plugin}
			if fresh || len(ws) > 0 || !sameKnown(prev, now) {
				e.state.put(d.UUID, now) // an idle provider leaves the cache clean: no save
			}
			e.synced(d, o, after, ws, dry)
			return planned(o, ws), ws, conflicts, nil
		case attempt >= e.opts.MaxAttempts:
			return unchanged, nil, conflicts, fmt.Errorf("provider %s: gave up after %d attempts: %w", d.UUID, attempt, err)
		case errors.Is(err, placement.ErrConcurrentUpdate):
			conflicts++
			exists, listed = true, ""
		case errors.Is(err, placement.ErrNotFound):
			exists, listed = false, "" // vanished behind our back: recreate now
		case errors.Is(err, placement.ErrDuplicateName):
			if err := e.checkName(ctx, d); err != nil {
				return unchanged, nil, conflicts, err
			}
			exists, listed, adopting = true, "", true
		case errors.Is(err, placement.ErrInventoryInUse):
			// The class changed under a live allocation (nova crashed here at
			// start-up): keep the old class, fully reserved, until it is free.
			if retained, err = e.stillInUse(ctx, d, o); err != nil {
				return unchanged, nil, conflicts, err
			}
			e.state.update(d.UUID, func(k *known) { k.Retained = retained })
			e.log.Warn("resource class changed on an occupied node; old class kept reserved",
				"node", d.UUID, "kept", retained)
			exists, listed = true, ""
		default:
			return unchanged, nil, conflicts, fmt.Errorf("provider %s: %w", d.UUID, err)
		}
		e.state.invalidate(d.UUID)
		if err := placement.Sleep(ctx, backoff(attempt)); err != nil {
			return unchanged, nil, conflicts, err
		}
	}
}

// stillInUse returns the observed classes the source no longer reports
// that still have allocations.
func (e *Engine) stillInUse(ctx context.Context, d Desired, o Observed) ([]string, error) {
	_, usages, err := e.pc.Usages(ctx, d.UUID)
	if err != nil {
		return nil, fmt.Errorf("provider %s: read usages: %w", d.UUID, err)
	}
	var keep []string
	for rc := range o.Inventory {
		if _, wanted := d.Inventory[rc]; !wanted && usages[rc] > 0 {
			keep = append(keep, rc)
		}
	}
	slices.Sort(keep)
	return keep, nil
}

// withRetained adds the retained classes, as observed but fully reserved,
// to the desired inventory.
func withRetained(d Desired, retained []string, o Observed) Desired {
	if len(retained) == 0 {
		return d
	}
	inv := maps.Clone(d.Inventory)
	for _, rc := range retained {
		if old, ok := o.Inventory[rc]; ok {
			old.Reserved = old.Total
			inv[rc] = old
		}
	}
	d.Inventory = inv
	return d
}

func planned(o Observed, ws []Write) outcome {
	switch {
	case !o.Exists:
		return created
	case len(ws) > 0:
		return updated
	}
	return unchanged
}

// observe returns the provider's state: from the cache entry k when the
// listed generation equals its generation (nothing changed since), else
// read.
func (e *Engine) observe(ctx context.Context, uuid string, exists bool, listed placement.Generation, k known) (o Observed, fresh bool, err error) {
	if !exists {
		return Observed{}, false, nil
	}
	if listed != "" && k.Generation == listed {
		return k.Observed, false, nil
	}
	o, err = e.read(ctx, uuid)
	return o, true, err
}

// read fetches inventory, traits and aggregates. Each answer carries the
// generation; if they differ something changed between the reads, so read
// again until one consistent view is seen.
func (e *Engine) read(ctx context.Context, uuid string) (Observed, error) {
	for try := 0; ; try++ {
		g1, inv, err := e.pc.Inventories(ctx, uuid)
		if err != nil {
			return Observed{}, err
		}
		g2, traits, err := e.pc.Traits(ctx, uuid)
		if err != nil {
			return Observed{}, err
		}
		g3, aggs, err := e.pc.Aggregates(ctx, uuid)
		if err != nil {
			return Observed{}, err
		}
		if g1 == g2 && g2 == g3 || try >= 3 {
			// After several tries a write with g3 still either succeeds on
			// a state no older than g3 or fails with a conflict.
			return Observed{Exists: true, Generation: g3, Inventory: inv, Traits: traits, Aggregates: aggs}, nil
		}
	}
}

// apply sends the writes in order, each with the generation the previous
// answer returned, and returns the provider's state afterwards.
func (e *Engine) apply(ctx context.Context, d Desired, o Observed, ws []Write) (Observed, error) {
	o.Traits, o.Aggregates = slices.Clone(o.Traits), slices.Clone(o.Aggregates)
	var refused error // a trait write Placement refused (400)
	for _, w := range ws {
		next, err := e.write(ctx, w, o)
		if err != nil && w.Op == OpTraits && isBadRequest(err) {
			// The inventory (the reservation) matters more than the
			// traits: write it anyway and report the refusal.
			refused = fmt.Errorf("%s: %w", w.Op, err)
			continue
		}
		if err != nil {
			return o, fmt.Errorf("%s: %w", w.Op, err)
		}
		if next.Generation != o.Generation {
			e.emit(ProviderWritten{Node: w.UUID, Op: w.Op,
				GenerationBefore: string(o.Generation), GenerationAfter: string(next.Generation)})
		}
		o = next
	}
	return o, refused
}

// write sends one write and returns the provider's state after it; on
// error the state passed in still stands.
func (e *Engine) write(ctx context.Context, w Write, o Observed) (Observed, error) {
	var err error
	switch w.Op {
	case OpCreate:
		var p placement.Provider
		p, err = e.pc.CreateProvider(ctx, w.UUID, w.Name)
		o = Observed{Exists: true, Generation: p.Generation, Inventory: map[string]placement.Inventory{}}
	case OpTraits:
		var set []string
		if set, err = e.knownTraits(ctx, w.Traits); err == nil && !sameSet(set, o.Traits) {
			// Left out unknown traits can make the write a no-op, which
			// Placement would still count as a change (a new generation).
			o.Generation, err = e.pc.SetTraits(ctx, w.UUID, o.Generation, set)
			o.Traits = set
		}
	case OpInventory:
		if err = e.ensureClasses(ctx, w.Inventory); err == nil {
			o.Generation, err = e.pc.SetInventories(ctx, w.UUID, o.Generation, w.Inventory)
			o.Inventory = w.Inventory
		}
	case OpAggregates:
		o.Generation, err = e.pc.SetAggregates(ctx, w.UUID, o.Generation, w.Aggregates)
		o.Aggregates = w.Aggregates
	}
	return o, err
}

func isBadRequest(err error) bool {
	var api *placement.APIError
	return errors.As(err, &api) && api.Status == 400
}

// knownTraits creates the custom traits of ts and drops standard ones
// this Placement does not know (e.g. from a newer os-traits): one unknown
// trait must not block a node's traits, let alone its inventory, every
// cycle (nova's _ensure_traits did).
func (e *Engine) knownTraits(ctx context.Context, ts []string) ([]string, error) {
	var standard, waiting []string
	for _, t := range ts {
		if strings.HasPrefix(t, "CUSTOM_") {
			err := e.pc.EnsureTrait(ctx, t)
			if errors.Is(err, placement.ErrWriteBudget) { // written in a later cycle; the cycle reports it
				waiting = append(waiting, t)
			} else if err != nil {
				return nil, err
			}
		} else {
			standard = append(standard, t)
		}
	}
	if len(waiting) > 0 {
		ts = slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return slices.Contains(waiting, t) })
	}
	unknown, err := e.pc.UnknownTraits(ctx, standard)
	if err != nil || len(unknown) == 0 {
		return ts, err
	}
	e.log.Warn("traits unknown to Placement left out", "traits", unknown)
	return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return slices.Contains(unknown, t) }), nil
}

func (e *Engine) ensureClasses(ctx context.Context, inv map[string]placement.Inventory) error {
	for rc := range inv {
		if strings.HasPrefix(rc, "CUSTOM_") {
			if err := e.pc.EnsureResourceClass(ctx, rc); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkName tells a uuid race (the provider exists: adopt it if it is not
// someone else's) from a different provider holding the name, which is
// reported and never overwritten.
func (e *Engine) checkName(ctx context.Context, d Desired) error {
	_, err := e.pc.GetProvider(ctx, d.UUID)
	if errors.Is(err, placement.ErrNotFound) {
		return fmt.Errorf("provider name %s is held by a provider with another uuid: %w", d.Name, errNameTaken)
	}
	return err
}

func (e *Engine) mayTakeOver(owner string) bool {
	return owner != "OWNER_NOVA" && e.pol.MayTakeOver != nil && e.pol.MayTakeOver(owner)
}

// foreignOwner returns the owner marker of another manager, if any.
func foreignOwner(traits []string, ours string) string {
	for _, t := range traits {
		if t == "OWNER_NOVA" || strings.HasPrefix(t, OwnerTraitPrefix) && t != ours {
			return t
		}
	}
	return ""
}

// backoff is the wait after the attempt-th conflict: from 20 ms, capped
// at 2 s, jittered (placement.Backoff).
func backoff(attempt int) time.Duration {
	return placement.Backoff(20*time.Millisecond, 2*time.Second, attempt+1)
}

// sameKnown compares what a put would change when the observation came
// from the cache unchanged.
func sameKnown(a, b known) bool {
	return a.GoneSince.IsZero() && !a.Pending && a.Plugin == b.Plugin && slices.Equal(a.Retained, b.Retained) &&
		slices.Equal(a.Managed.Traits, b.Managed.Traits) && slices.Equal(a.Managed.Aggregates, b.Managed.Aggregates)
}

// sameSet compares two trait lists as sets.
func sameSet(a, b []string) bool {
	return slices.Equal(sortedSet(a), sortedSet(b))
}
