package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// providerSync is one provider's sync, across its tries.
type providerSync struct {
	d        Desired
	listed   placement.Generation // from this cycle's listing; "" once it says nothing
	exists   bool
	adopting bool     // found by its name: taken over if its owner may be
	seen     known    // before this cycle: to see another writer's rewrite
	prev     known    // as of this try
	retained []string // classes kept reserved under live allocations
	tries    int
	counted  bool // its foreign rewrite is counted
	conflict int
}

// syncOne makes one provider match d. listed is the generation from this
// cycle's listing, or "" if the provider was not listed. Each try
// observes the provider, checks it is ours to write, plans the writes and
// applies them; a failed write is classified, and a generation conflict,
// a provider that vanished or whose name raced, is tried again from a
// fresh read (retryOnConflict).
func (c *cycle) syncOne(ctx context.Context, d Desired, listed placement.Generation) (res outcome, conflicts int, err error) {
	if err := c.quiet.leftAlone(d.UUID, c.e.mayTakeOver); err != nil {
		return unchanged, 0, err // another's, unchanged since read: no request
	}
	p := &providerSync{d: d, listed: listed, exists: listed != ""}
	if g, ok := c.others.takeable[d.UUID]; ok && listed == "" {
		// Listed under an owner the fleet gave up (takeover.go): adopt it
		// from that generation, with no refused create nor lookup first.
		p.listed, p.exists, p.adopting = g, true, true
	}
	// The first try uses the entry seen: one lookup, not three (the
	// state lock and map were a tenth of an idle cycle).
	p.seen, _ = c.state.get(d.UUID)
	err = c.e.retryOnConflict(ctx, func() (err error) {
		res, err = c.syncOnce(ctx, p)
		return err
	})
	if errors.Is(err, errGaveUp) {
		if errors.Is(err, placement.ErrConcurrentUpdate) {
			p.conflict-- // Conflicts counts the conflicts retried; the last was not
		}
		err = fmt.Errorf("provider %s: %w", d.UUID, err)
	}
	return res, p.conflict, err
}

// isSettled says whether syncOne would find provider d, whose entry is
// k and listed generation gen, as it should be and leave it so: observed
// from the cache (the generation listed), ours, nothing retained, no
// write planned, nothing for the entry to change. intend asks it while
// it holds the entry: one state lookup a provider, not two, and no
// second visit to its entry, scattered through the heap (at 100,000
// providers the second lookup was a tenth of an idle cycle).
func (c *cycle) isSettled(d Desired, k known, gen placement.Generation) bool {
	o := k.Observed
	if gen == "" || !o.Exists || o.Generation != gen || len(k.Retained) > 0 || !slices.Contains(o.Traits, c.e.pol.OwnerTrait) {
		return false
	}
	now := known{Observed: o, Record: Record{Managed: Managed{Traits: d.Traits, Aggregates: d.Aggregates}, Plugin: c.e.opts.Plugin}}
	return len(Plan(d, o, k.Managed)) == 0 && sameKnown(k, now)
}

// judgeAtIntend turns isSettled on; tests turn it off to compare.
var judgeAtIntend = true

// syncSettled is syncOne for a provider isSettled judged: the same
// outcome (unchanged) without looking at it again. An observer is told
// what Placement holds, the entry judged (no write since: syncAll).
func (c *cycle) syncSettled(d Desired) (outcome, int, error) {
	if err := c.quiet.leftAlone(d.UUID, c.e.mayTakeOver); err != nil {
		return unchanged, 0, err
	}
	var held Observed
	if c.e.opts.Observer != nil {
		k, _ := c.state.get(d.UUID)
		held = k.Observed
	}
	c.synced(d, Observed{Exists: true}, held, nil)
	return unchanged, 0, nil
}

// syncOnce is one try: observe → own → plan → apply (→ classify).
func (c *cycle) syncOnce(ctx context.Context, p *providerSync) (outcome, error) {
	p.prev = p.seen
	if p.tries++; p.tries > 1 {
		p.prev, _ = c.state.get(p.d.UUID)
	}
	o, fresh, err := c.observeProvider(ctx, p)
	if errors.Is(err, placement.ErrNotFound) {
		p.exists, p.listed = false, ""
		return unchanged, again(err)
	}
	if err != nil {
		return unchanged, err
	}
	if err := c.ownProvider(p, o); err != nil {
		return unchanged, err
	}
	ws, err := c.providerWrites(ctx, p, o, fresh)
	if err != nil {
		return unchanged, err
	}
	if p.adopting {
		ws = reserveFirst(ws) // takeover.go
	}
	after, err := c.apply(ctx, o, ws, p.d.NodeName)
	if err != nil {
		if fresh || after.Generation != o.Generation {
			// What was read and written before the failure still holds (a
			// cache entry is used only while its generation is listed): a
			// 5xx on the last write must not cost three reads next cycle.
			c.state.update(p.d.UUID, func(k *known) { k.Observed = after })
		}
		return unchanged, c.classify(ctx, p, o, err)
	}
	now := known{Observed: after, Record: Record{Retained: p.retained, Managed: Managed{Traits: p.d.Traits, Aggregates: p.d.Aggregates},
		Plugin: c.e.opts.Plugin}}
	if fresh || len(ws) > 0 || !sameKnown(p.prev, now) {
		c.state.put(p.d.UUID, now) // an idle provider leaves the cache clean: no save
	}
	c.synced(p.d, o, after, ws)
	return outcomeOfWrites(o, ws), nil
}

// observeProvider returns the provider's state: from the cache when the
// listed generation equals the cached one (nothing changed since), else
// read; fresh says it was read.
func (c *cycle) observeProvider(ctx context.Context, p *providerSync) (o Observed, fresh bool, err error) {
	if !p.exists {
		return Observed{}, false, nil
	}
	if p.listed != "" && p.prev.Generation == p.listed {
		return p.prev.Observed, false, nil
	}
	o, err = c.read(ctx, p.d.UUID)
	return o, true, err
}

// ownProvider checks the provider is this engine's to write. Re-read after
// a conflict, it may have been taken over by another engine meanwhile (a
// hand-over): writing now would put two owner markers on it. One found by
// its name is taken over only from an owner the policy allows.
func (c *cycle) ownProvider(p *providerSync, o Observed) error {
	ours := c.e.pol.OwnerTrait
	if !p.adopting {
		if o.Exists && !slices.Contains(o.Traits, ours) {
			if owner := c.e.otherOwner(o.Traits); owner != "" {
				c.quiet.sawForeign(p.d.UUID, owner, o.Generation)
				return fmt.Errorf("provider %s was taken over by %s: %w", p.d.UUID, owner, errOwned)
			}
		}
		return nil
	}
	owner := c.e.otherOwner(o.Traits)
	if owner != "" && !c.e.mayTakeOver(owner) {
		c.quiet.sawForeign(p.d.UUID, owner, o.Generation)
		return fmt.Errorf("provider %s exists and is owned by %s: %w", p.d.UUID, owner, errOwned)
	}
	if owner != "" {
		// The marker flips in one generation-checked write: if the old
		// owner writes first, this fails and is retried.
		p.prev.Managed.Traits = append(slices.Clone(p.prev.Managed.Traits), owner)
		c.e.log.Info("taking over provider", NodeAttrs(p.d.UUID, p.d.NodeName, "from", owner)...)
	}
	return nil
}

// providerWrites lists the writes that make o match d, classes still in use
// kept reserved, and counts another writer's rewrite.
func (c *cycle) providerWrites(ctx context.Context, p *providerSync, o Observed, fresh bool) ([]Write, error) {
	p.retained = p.prev.Retained
	// Usages are re-read even when the generation says unchanged:
	// DELETE /allocations frees a class without bumping it.
	if len(p.retained) > 0 && o.Exists {
		var err error
		if p.retained, err = c.stillInUse(ctx, p.d, o); err != nil {
			return nil, err
		}
	}
	ws := Plan(withRetained(p.d, p.retained, o), o, p.prev.Managed)
	if fresh && !p.counted && foreignRewrite(p.seen, o, ws) {
		p.counted = true
		c.foreign.Add(1)
	}
	return ws, nil
}

// classify tells a failed write worth another try, once what it needs is
// re-read, from a final failure.
func (c *cycle) classify(ctx context.Context, p *providerSync, o Observed, err error) error {
	switch {
	case errors.Is(err, placement.ErrConcurrentUpdate):
		p.conflict++
		p.exists, p.listed = true, ""
	case errors.Is(err, placement.ErrNotFound):
		p.exists, p.listed = false, "" // vanished behind our back: recreate now
	case errors.Is(err, placement.ErrDuplicateName):
		if err := c.checkName(ctx, p.d); err != nil {
			return err
		}
		p.exists, p.listed, p.adopting = true, "", true
	case errors.Is(err, placement.ErrInventoryInUse):
		// The class changed under a live allocation (nova crashed here at
		// start-up): keep the old class, fully reserved, until it is free.
		retained, err := c.stillInUse(ctx, p.d, o)
		if err != nil {
			return err
		}
		c.state.update(p.d.UUID, func(k *known) { k.Retained = retained })
		c.e.log.Warn("resource class changed on an occupied node; old class kept reserved",
			NodeAttrs(p.d.UUID, p.d.NodeName, "kept", retained)...)
		p.exists, p.listed = true, ""
	default:
		return fmt.Errorf("provider %s: %w", p.d.UUID, err)
	}
	c.state.invalidate(p.d.UUID)
	return again(err)
}

// stillInUse returns the observed classes the source no longer reports
// that still have allocations.
func (c *cycle) stillInUse(ctx context.Context, d Desired, o Observed) ([]string, error) {
	_, usages, err := c.e.pc.Usages(ctx, d.UUID)
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
// to the desired inventory. A whole node's new classes are fully reserved
// too: its unit is claimed under the old class (a scheduler's claim on a
// node that changed class), so offering the new one would double-book it.
func withRetained(d Desired, retained []string, o Observed) Desired {
	if len(retained) == 0 {
		return d
	}
	inv := maps.Clone(d.Inventory)
	if d.Whole {
		for rc, i := range inv {
			i.Reserved = i.Total
			inv[rc] = i
		}
	}
	for _, rc := range retained {
		if old, ok := o.Inventory[rc]; ok {
			old.Reserved = old.Total
			inv[rc] = old
		}
	}
	d.Inventory = inv
	return d
}

func outcomeOfWrites(o Observed, ws []Write) outcome {
	switch {
	case !o.Exists:
		return created
	case len(ws) > 0:
		return updated
	}
	return unchanged
}

// read fetches inventory, traits and aggregates. Each answer carries the
// generation; if they differ something changed between the reads, so read
// again until one consistent view is seen.
func (c *cycle) read(ctx context.Context, uuid string) (Observed, error) {
	for try := 0; ; try++ {
		g1, inv, err := c.e.pc.Inventories(ctx, uuid)
		if err != nil {
			return Observed{}, err
		}
		g2, traits, err := c.e.pc.Traits(ctx, uuid)
		if err != nil {
			return Observed{}, err
		}
		g3, aggs, err := c.e.pc.Aggregates(ctx, uuid)
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
func (c *cycle) apply(ctx context.Context, o Observed, ws []Write, name string) (Observed, error) {
	if len(ws) == 0 {
		return o, nil // an idle provider: no copy of its lists (100,000 a cycle)
	}
	o.Traits, o.Aggregates = slices.Clone(o.Traits), slices.Clone(o.Aggregates)
	var refused error // a trait write Placement refused (400)
	ctx, answer := placement.WithAnswerID(ctx)
	for _, w := range ws {
		next, err := c.write(ctx, w, o)
		if err != nil && w.Op == OpTraits && isBadRequest(err) {
			// The inventory (the reservation) matters more than the
			// traits: write it anyway and report the refusal.
			refused = fmt.Errorf("%s: %w", w.Op, err)
			continue
		}
		if err != nil {
			return o, fmt.Errorf("%s: %w", w.Op, err)
		}
		c.written(ctx, w.UUID, name, w.Op, o.Generation, next.Generation, answer)
		o = next
	}
	return o, refused
}

// writeOnce sends one write and returns the provider's state after it; on
// error the state passed in still stands. write (names.go) calls it.
func (c *cycle) writeOnce(ctx context.Context, w Write, o Observed) (Observed, error) {
	var err error
	switch w.Op {
	case OpCreate:
		var gen placement.Generation
		gen, err = c.w.CreateProvider(ctx, w.UUID, w.Name)
		o = Observed{Exists: true, Generation: gen, Inventory: map[string]placement.Inventory{}}
	case OpTraits:
		var set []string
		if set, err = c.knownTraits(ctx, w.Traits); err == nil && !sameSet(set, o.Traits) {
			// Left out unknown traits can make the write a no-op, which
			// Placement would still count as a change (a new generation).
			o.Generation, err = c.w.SetTraits(ctx, w.UUID, o.Generation, set)
			o.Traits = set
		}
	case OpInventory:
		if err = c.ensureClasses(ctx, w.Inventory); err == nil {
			o.Generation, err = c.w.SetInventories(ctx, w.UUID, o.Generation, w.Inventory)
			o.Inventory = w.Inventory
		}
	case OpAggregates:
		o.Generation, err = c.w.SetAggregates(ctx, w.UUID, o.Generation, w.Aggregates)
		o.Aggregates = w.Aggregates
	}
	return o, err
}

func isBadRequest(err error) bool {
	var api *placement.APIError
	return errors.As(err, &api) && api.Status == 400
}

// checkName tells a uuid race (the provider exists: adopt it if it is not
// someone else's) from a different provider holding the name, which is
// reported and never overwritten.
func (c *cycle) checkName(ctx context.Context, d Desired) error {
	_, err := c.e.pc.GetProvider(ctx, d.UUID)
	if errors.Is(err, placement.ErrNotFound) {
		return fmt.Errorf("provider name %s is held by a provider with another uuid: %w", d.Name, errNameTaken)
	}
	return err
}

func (e *Engine) mayTakeOver(owner string) bool {
	return owner != OwnerNova && e.pol.MayTakeOver != nil && e.pol.MayTakeOver(owner)
}

// backoff is the wait after the attempt-th conflict: from 20 ms, capped
// at 2 s, jittered (placement.Backoff).
func backoff(attempt int) time.Duration {
	return placement.Backoff(20*time.Millisecond, 2*time.Second, attempt+1)
}

// retryable marks an error worth another try (again).
type retryable struct{ error }

func (r retryable) Unwrap() error { return r.error }

// again marks err worth another try, once its cause is re-read.
func again(err error) error { return retryable{err} }

// onConflict marks a generation conflict worth another try.
func onConflict(err error) error {
	if errors.Is(err, placement.ErrConcurrentUpdate) {
		return again(err)
	}
	return err
}

// errGaveUp wraps the last error of a write that met MaxAttempts conflicts.
var errGaveUp = errors.New("gave up")

// retryOnConflict runs try until it succeeds, fails for good (an error not
// marked by again), or has failed MaxAttempts times; between tries it
// waits a jittered backoff. Every loop that meets Placement's generation
// conflicts goes through it.
func (e *Engine) retryOnConflict(ctx context.Context, try func() error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return nil // before errors.As, whose target escapes: one allocation per provider
		}
		var r retryable
		if !errors.As(err, &r) {
			return err
		}
		if attempt >= e.opts.MaxAttempts {
			return fmt.Errorf("%w after %d attempts: %w", errGaveUp, attempt, r.error)
		}
		if err := placement.Sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

// sameKnown compares what a put would change when the observation came
// from the cache unchanged.
func sameKnown(a, b known) bool {
	return a.GoneSince.IsZero() && !a.Pending && a.Doubt == b.Doubt && a.Plugin == b.Plugin && slices.Equal(a.Retained, b.Retained) &&
		slices.Equal(a.Managed.Traits, b.Managed.Traits) && slices.Equal(a.Managed.Aggregates, b.Managed.Aggregates)
}

// sameSet compares two trait lists as sets.
func sameSet(a, b []string) bool {
	return slices.Equal(sortedSet(a), sortedSet(b))
}
