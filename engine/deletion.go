package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// DeletionChecker is the optional capability of a source to prove that a
// node is gone. Without it the engine never deletes a provider.
type DeletionChecker interface {
	ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error)
}

// OpDelete is a provider deletion, planned only with proof.
const OpDelete Op = "delete_provider"

// reapVanished handles this engine's providers whose node the (complete)
// listing no longer contains. Absence proves nothing — the node may have
// moved out of scope, or the listing raced a change — so each one needs
// the source's positive proof of deletion in two cycles at least
// DeleteGrace apart, the owner marker still ours just before the delete,
// and no allocations. Too many at once is treated as a fault upstream.
func (e *Engine) reapVanished(ctx context.Context, nodes []hostabi.Node, desired []Desired, owned map[string]placement.Generation, round int64, dry bool, r *Report) {
	candidates := e.ownCandidates(vanished(nodes, desired, owned), r)
	if len(candidates) == 0 {
		return
	}
	checker, ok := e.src.(DeletionChecker)
	if c, isPlugin := e.src.(interface{ Supports(string) bool }); isPlugin {
		ok = ok && c.Supports(hostabi.ExportConfirmDeleted)
	}
	if !ok {
		e.log.Info("providers of unlisted nodes kept: the plugin cannot prove deletion", "count", len(candidates))
		e.kept(candidates, ReasonNoProofCapability, "not listed; the plugin cannot prove deletion")
		return
	}
	t := time.Now()
	deleted, present, err := e.askProofs(ctx, checker, candidates)
	r.proofTime = time.Since(t)
	r.PluginMS += r.proofTime.Milliseconds()
	if err != nil {
		r.fail(ErrPlugin, "", fmt.Sprintf("confirm deletion of %d unlisted nodes: %v; nothing deleted", len(candidates), err))
		e.kept(candidates, ReasonProofFailed, "not listed; confirm_deleted failed")
		return
	}
	proofs := e.proofCount(deleted, round)
	ready := e.provenGone(candidates, deleted, present, round, dry)
	e.proofOutcomes(candidates, deleted, present, ready, proofs)
	if limit := e.deleteLimit(len(owned)); len(ready) > limit {
		r.fail(ErrBlocked, "", fmt.Sprintf("%d providers proven deleted, over the limit of %d per cycle "+
			"(engine.delete_limit); nothing deleted: check the source, or raise the limit", len(ready), limit))
		for _, uuid := range ready {
			if dry {
				e.blockedOutcome(uuid, ReasonDeleteLimit, "proven deleted, but too many at once (engine.delete_limit)")
				continue
			}
			e.block(ctx, uuid, "the cycle is over engine.delete_limit", r)
		}
		return
	}
	for _, uuid := range ready {
		if dry {
			r.Writes = append(r.Writes, Write{Op: OpDelete, UUID: uuid})
			e.reaped(uuid, nil, dry)
			continue
		}
		blocked, err := e.deleteOne(ctx, uuid)
		switch {
		case blocked != "":
			e.block(ctx, uuid, blocked, r)
		case err != nil:
			_, kind, _ := classify(err)
			r.fail(kind, uuid, err.Error())
			e.reaped(uuid, err, dry)
		default:
			r.Deleted++
			e.reaped(uuid, nil, dry)
		}
	}
}

// block fails safe when a provider of a node proven gone cannot be
// deleted, whatever the reason: it is fully reserved in this cycle, so
// the scheduler cannot place anything on a node that no longer exists,
// and deleted in a later cycle once the obstacle is gone (the proofs go
// on while the node stays gone).
func (e *Engine) block(ctx context.Context, uuid, reason string, r *Report) {
	r.Blocked++
	var msg string
	if err := e.reserveAll(ctx, uuid); err != nil {
		msg = fmt.Sprintf("provider %s: node proven gone, not deleted (%s), and not reserved: %v", uuid, reason, err)
	} else {
		msg = fmt.Sprintf("provider %s: node deleted but %s; reserved, not deleted until it can be", uuid, reason)
	}
	r.fail(ErrBlocked, uuid, msg)
	e.blockedOutcome(uuid, blockedCode(reason), msg)
}

// vanished lists owned providers whose node is not in the listing.
func vanished(nodes []hostabi.Node, desired []Desired, owned map[string]placement.Generation) []string {
	// The usual case first, without a set of 100,000 node uuids: desired
	// uuids are distinct and each is a listed node's, so when as many of
	// them are owned as there are owned providers, none vanished.
	ownedDesired := 0
	for _, d := range desired {
		if _, ok := owned[d.UUID]; ok {
			ownedDesired++
		}
	}
	if ownedDesired == len(owned) {
		return nil
	}
	listed := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		listed[strings.ToLower(n.UUID)] = true
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

// provenGone records proofs and returns the uuids proven deleted in this
// cycle and in the one before it, the first at least DeleteGrace ago. A
// cycle without a proof (the node listed, present, unknown, or a failed
// listing) restarts the count: two proofs with a gap prove nothing about
// the gap. Answers about uuids the engine did not ask for are ignored.
func (e *Engine) provenGone(asked, deleted, present []string, round int64, dry bool) []string {
	now := e.now()
	isAsked := setOf(asked) // a set, not a search per answer: 100,000 unlisted cost N²
	for _, uuid := range present {
		if isAsked[uuid] && !dry {
			e.state.forgetProof(uuid)
		}
	}
	var ready []string
	for _, uuid := range deleted {
		if !isAsked[uuid] {
			continue
		}
		k, _ := e.state.get(uuid)
		consecutive := !k.GoneSince.IsZero() && k.ProofRound == round-1
		if consecutive && now.Sub(k.GoneSince) >= e.opts.DeleteGrace {
			ready = append(ready, uuid)
		}
		if dry {
			continue
		}
		e.state.update(uuid, func(k *known) {
			if !consecutive {
				k.GoneSince = now
			}
			k.ProofRound = round
		})
	}
	return ready
}

// forgetProofs drops the proofs of deletion of nodes the source lists
// (again: re-enrolled with the same uuid). A delete needs two proofs of
// the current deletion, not one left over from an earlier one.
func (e *Engine) forgetProofs(nodes []hostabi.Node) {
	if !e.state.anyProof() { // the usual case: no need to look up every node
		return
	}
	for _, n := range nodes {
		u := strings.ToLower(n.UUID)
		if k, ok := e.state.get(u); ok && !k.GoneSince.IsZero() {
			e.state.update(u, func(k *known) { k.GoneSince, k.ProofRound = time.Time{}, 0 })
		}
	}
}

// forgetProof drops a provider's proof of deletion, if it has one: a
// node proven present every cycle must not rewrite the state file.
func (s *State) forgetProof(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.providers[uuid]; ok && (!k.GoneSince.IsZero() || k.ProofRound != 0) {
		k.GoneSince, k.ProofRound = time.Time{}, 0
		s.providers[uuid], s.dirty = k, true
	}
}

func (e *Engine) deleteLimit(owned int) int {
	return max(1, int(math.Floor(e.opts.DeleteLimit*float64(owned))))
}

// deleteOne deletes a provider after checking, just before, that it still
// carries this engine's marker and has no allocations. DELETE takes no
// generation, so this re-read is the closest Placement allows to a
// compare-and-swap. blocked says why a provider that is still ours could
// not be deleted (allocations, a child provider, any refusal): the caller
// reserves it. err is a failure to find out.
func (e *Engine) deleteOne(ctx context.Context, uuid string) (blocked string, err error) {
	_, traits, err := e.pc.Traits(ctx, uuid)
	if errors.Is(err, placement.ErrNotFound) {
		e.state.drop(uuid)
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	if !slices.Contains(traits, e.pol.OwnerTrait) {
		e.state.drop(uuid)
		return "", fmt.Errorf("provider %s no longer carries %s: %w", uuid, e.pol.OwnerTrait, errMarkerGone)
	}
	_, usages, err := e.pc.Usages(ctx, uuid)
	if err != nil {
		return "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	for _, used := range usages {
		if used > 0 {
			return msgAllocations, nil
		}
	}
	err = e.pc.DeleteProvider(ctx, uuid)
	var api *placement.APIError
	switch {
	case errors.Is(err, placement.ErrProviderInUse):
		return msgAllocations, nil
	case errors.As(err, &api) && api.Status < 500 && !errors.Is(err, placement.ErrNotFound):
		return "Placement refused the delete (" + api.Code + ": " + short(api.Detail) + ")", nil
	case err != nil && !errors.Is(err, placement.ErrNotFound):
		return "", fmt.Errorf("delete provider %s: %w", uuid, err)
	}
	e.state.drop(uuid)
	return "", nil
}

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
func (e *Engine) reserveAll(ctx context.Context, uuid string) error {
	if e.quiet.stillReserved(uuid) {
		return nil
	}
	for attempt := 1; attempt <= e.opts.MaxAttempts; attempt++ {
		gen, inv, err := e.pc.Inventories(ctx, uuid)
		if err != nil {
			return err
		}
		changed := false
		for rc, i := range inv {
			if i.Reserved != i.Total {
				i.Reserved = i.Total
				inv[rc], changed = i, true
			}
		}
		if changed {
			gen, err = e.pc.SetInventories(ctx, uuid, gen, inv)
		}
		if !errors.Is(err, placement.ErrConcurrentUpdate) {
			if err == nil {
				e.state.invalidate(uuid)
				e.quiet.sawReserved(uuid, gen)
			}
			return err
		}
		if err := placement.Sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
	return fmt.Errorf("gave up after %d conflicts", e.opts.MaxAttempts)
}

// ownCandidates keeps the candidates written for this engine's plugin
// (or before plugins were recorded); the others are kept and reported
// once per cycle, since no other plugin can vouch for their nodes.
func (e *Engine) ownCandidates(candidates []string, r *Report) []string {
	var own, other []string
	for _, u := range candidates {
		if k, _ := e.state.get(u); k.Plugin != "" && e.opts.Plugin != "" && k.Plugin != e.opts.Plugin {
			other = append(other, u)
		} else {
			own = append(own, u)
		}
	}
	if len(other) > 0 {
		e.kept(other, ReasonOtherPlugin, "written for another plugin's node; only that plugin can prove it gone")
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d providers were written from another plugin and are kept: "+
			"run that plugin to have them proven gone, or delete them by hand", len(other)))
	}
	return own
}
