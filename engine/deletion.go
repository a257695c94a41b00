package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// doubtVanished handles this engine's providers whose node the
// (complete) listing no longer contains. Absence proves nothing — the node
// may have moved out of scope, or the listing raced a change — so each one
// needs the source's positive proof of deletion in two cycles at least
// DeleteGrace apart (proof.go), the owner marker still ours just before
// the delete, and no allocations. The proofs are asked and every doubt
// reserved before the syncs, as a quarantine's: a take-over's flips of
// hundreds of providers must not keep a deleted node offered. The
// deletions wait for reapVanished, after the syncs. Too many at once is
// treated as a fault upstream.
func (c *cycle) doubtVanished(ctx context.Context, nodes listedNodes, desired []Desired, owned map[string]placement.Generation) {
	candidates := c.ownCandidates(vanished(nodes.uuids, desired, owned, c.gens))
	// A node a node sync read after this cycle's listing began (a node
	// enrolled meanwhile) is not unlisted: it is newer than the listing.
	candidates = slices.DeleteFunc(candidates, c.newerThanCycle)
	candidates = slices.DeleteFunc(candidates, func(u string) bool { _, _, paused := c.pause(u); return paused }) // never deleted
	if len(candidates) == 0 {
		return
	}
	checker, ok := ProvesDeletion(c.e.src)
	if !ok {
		c.e.log.Info("providers of unlisted nodes kept: the plugin cannot prove deletion", "count", len(candidates))
		c.kept(candidates, ReasonNoProofCapability, "not listed; the plugin cannot prove deletion")
		return
	}
	t := time.Now()
	deleted, present, err := c.askProofs(ctx, checker, candidates)
	c.proofTime = time.Since(t)
	c.r.PluginMS += c.proofTime.Milliseconds()
	if err != nil {
		c.fail(ErrPlugin, "", fmt.Sprintf("confirm deletion of %d unlisted nodes: %v; nothing deleted", len(candidates), err))
		c.kept(candidates, ReasonProofFailed, "not listed; confirm_deleted failed")
		return
	}
	proofs := c.proofCount(deleted)
	ready := c.provenGone(candidates, deleted, present)
	reserved := c.reservePending(ctx, candidates, deleted, ready, owned) // doubt.go
	left := c.reserveLeft(ctx, candidates, present, owned)               // doubt.go
	c.proofOutcomes(candidates, deleted, present, ready, proofs, reserved, left)
	c.ready = ready
}

// reapVanished deletes the providers doubtVanished found proven gone
// (c.ready), after the syncs.
func (c *cycle) reapVanished(ctx context.Context, owned map[string]placement.Generation) {
	ready := c.ready
	if len(ready) == 0 {
		return
	}
	if limit := c.e.deleteLimit(len(owned)); len(ready) > limit {
		c.fail(ErrBlocked, "", fmt.Sprintf("%d providers proven deleted, over the limit of %d per cycle "+
			"(engine.delete_limit); nothing deleted: check the source, or raise the limit", len(ready), limit))
		for _, uuid := range ready {
			c.block(ctx, uuid, ReasonDeleteLimit, "the cycle is over engine.delete_limit")
		}
		return
	}
	for _, uuid := range ready {
		code, why, err := c.deleteOrWait(ctx, uuid) // quiet.go
		switch {
		case code != "":
			c.block(ctx, uuid, code, why)
		case err != nil:
			_, kind, _ := classify(err)
			c.fail(kind, uuid, err.Error())
			c.reaped(uuid, err)
		default:
			c.r.Deleted++
			c.reaped(uuid, nil)
		}
	}
}

// block fails safe when a provider of a node proven gone cannot be
// deleted, whatever the reason (code, and why for humans): it is fully
// reserved in this cycle, so the scheduler cannot place anything on a
// node that no longer exists, and deleted in a later cycle once the
// obstacle is gone (the proofs go on while the node stays gone).
func (c *cycle) block(ctx context.Context, uuid, code, why string) {
	c.r.Blocked++
	var msg string
	if err := c.reserveAll(ctx, uuid); err != nil {
		msg = fmt.Sprintf("provider %s: node proven gone, not deleted (%s), and not reserved: %v", uuid, why, err)
	} else {
		msg = fmt.Sprintf("provider %s: node deleted but %s; reserved, not deleted until it can be", uuid, why)
	}
	c.fail(ErrBlocked, uuid, msg)
	c.blockedOutcome(uuid, code, msg)
}

// vanished lists owned providers whose node is not in the listing (the
// listed uuids, lowercase); gens, if not nil, holds each desired
// provider's listed generation (intend).
func vanished(nodes []string, desired []Desired, owned map[string]placement.Generation, gens []placement.Generation) []string {
	// The usual case first, without a set of 100,000 node uuids: desired
	// uuids are distinct and each is a listed node's, so when as many of
	// them are owned as there are owned providers, none vanished.
	ownedDesired := 0
	for i, d := range desired {
		if gens != nil {
			if gens[i] != "" {
				ownedDesired++
			}
		} else if _, ok := owned[d.UUID]; ok {
			ownedDesired++
		}
	}
	if ownedDesired == len(owned) {
		return nil
	}
	listed := make(map[string]bool, len(nodes))
	for _, u := range nodes {
		listed[u] = true
	}
	var out []string
	for uuid := range owned {
		if !listed[uuid] {
			out = append(out, uuid)
		}
	}
	slices.Sort(out)
	return out
}

func (e *Engine) deleteLimit(owned int) int {
	return max(1, int(math.Floor(e.opts.DeleteLimit*float64(owned))))
}

// deleteOne deletes a provider after checking, just before, that it still
// carries this engine's marker and has no allocations. DELETE takes no
// generation, so this re-read is the closest Placement allows to a
// compare-and-swap. A provider that is still ours but cannot be deleted
// (allocations, a child provider, any refusal) is returned as blocked,
// with its reason code and why: the caller reserves it. err is a failure
// to find out.
func (c *cycle) deleteOne(ctx context.Context, uuid string) (code, why string, err error) {
	_, traits, err := c.e.pc.Traits(ctx, uuid)
	if errors.Is(err, placement.ErrNotFound) {
		c.state.drop(uuid)
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	if !slices.Contains(traits, c.e.pol.OwnerTrait) {
		c.state.forget(uuid) // its shared record entry is its new owner's
		return "", "", fmt.Errorf("provider %s no longer carries %s: %w", uuid, c.e.pol.OwnerTrait, errMarkerGone)
	}
	_, usages, err := c.e.pc.Usages(ctx, uuid)
	if err != nil {
		return "", "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	for _, used := range usages {
		if used > 0 {
			return ReasonAllocations, msgAllocations, nil
		}
	}
	err = c.w.DeleteProvider(ctx, uuid)
	var api *placement.APIError
	switch {
	case errors.Is(err, placement.ErrProviderInUse):
		return ReasonAllocations, msgAllocations, nil
	case errors.As(err, &api) && api.Status < 500 && !errors.Is(err, placement.ErrNotFound):
		return ReasonRefused, "Placement refused the delete (" + api.Code + ": " + short(api.Detail) + ")" + api.IDs(), nil
	case err != nil && !errors.Is(err, placement.ErrNotFound):
		return "", "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	c.state.drop(uuid)
	return "", "", nil
}

// msgAllocations says why a provider still in use is not deleted.
const msgAllocations = "the provider has allocations"

// short cuts an outside message to a bounded prefix.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// reserveAll makes a provider of a deleted node unschedulable while it
// cannot be deleted; the engine never removes allocations. A provider
// already fully reserved costs one read and no write, and none at all
// while its generation is the one the reservation left (quiet.go).
func (c *cycle) reserveAll(ctx context.Context, uuid string) error {
	if c.quiet.stillReserved(uuid) { // reserved at this generation: unchanged since (quiet.go)
		return nil
	}
	gen, err := c.reserveFully(ctx, uuid, "") // doubt.go; a node proven gone has no name
	if err == nil {                           // a plan's quiet book is its own copy
		c.quiet.sawReserved(uuid, gen)
	}
	return err
}

// ownCandidates keeps the candidates written for this engine's plugin
// (or before plugins were recorded); the others are kept and reported
// once per cycle, since no other plugin can vouch for their nodes.
func (c *cycle) ownCandidates(candidates []string) []string {
	var own, other []string
	for _, u := range candidates {
		if k, _ := c.state.get(u); k.Plugin != "" && c.e.opts.Plugin != "" && k.Plugin != c.e.opts.Plugin {
			other = append(other, u)
		} else {
			own = append(own, u)
		}
	}
	if len(other) > 0 {
		c.kept(other, ReasonOtherPlugin, "written for another plugin's node; only that plugin can prove it gone")
		c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%d providers were written from another plugin and are kept: "+
			"run that plugin to have them proven gone, or delete them by hand", len(other)))
	}
	return own
}
