package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/placement"
)

// Every doubt reserves. A node the engine cannot vouch for keeps its
// provider (deleting on doubt would lose a node), but not as a candidate:
// in the cycle that sees the doubt, the provider of a quarantined node, or
// of a node not listed and proven gone once, is fully reserved. Releasing
// it needs no memory of what it held: the release is the ordinary sync of
// the node's data once the source reports it good (or lists it again),
// which writes the reserved values the source's data gives, and clears
// the record. The second proof of deletion deletes it as before.
//
// The record (known.Doubt) reaches the disk before the reserve is sent,
// so that after kill -9 at any point a restart knows the reserve is the
// engine's own; nothing depends on it for safety (a provider reserved
// without it is released by the same sync). known.DoubtGeneration spares
// an unchanged reserved provider any request in later cycles.

// doubtful is a provider to reserve on doubt.
type doubtful struct {
	uuid string
	why  baremetal.ReservedReason
	gen  placement.Generation // as listed this cycle
	name string               // the node's, when the source lists it
}

// reserveDoubts fully reserves each provider in ds that is not already
// reserved at its listed generation, after recording the doubts (one
// fsync for all). It reports what it did and returns the uuids now
// reserved (in a plan, that would be).
func (c *cycle) reserveDoubts(ctx context.Context, ds []doubtful) map[string]bool {
	done := make(map[string]bool, len(ds))
	var todo []doubtful
	for _, d := range ds {
		if _, _, paused := c.pause(d.uuid); paused {
			continue // an operator's pause: not written, not even to reserve
		}
		if k, _ := c.state.get(d.uuid); k.Doubt == string(d.why) && k.DoubtGeneration != "" && k.DoubtGeneration == d.gen {
			done[d.uuid] = true // reserved by an earlier cycle, unchanged since
			continue
		}
		todo = append(todo, d)
	}
	if len(todo) == 0 {
		return done
	}
	for _, d := range todo {
		c.state.update(d.uuid, func(k *known) { k.Doubt, k.DoubtGeneration = string(d.why), "" })
	}
	if err := c.rec.Save(); err != nil { // reserving is still the safe way: go on
		c.e.log.Warn("doubt not recorded before reserving", "err", err)
	}
	for i, d := range todo {
		if why, kind := c.halted(); why != "" {
			c.fail(kind, "", fmt.Sprintf("%s: %d providers not reserved this cycle", why, len(todo)-i))
			break
		}
		gen, err := c.reserveFully(ctx, d.uuid, d.name)
		if err != nil {
			_, kind, _ := classify(err)
			c.fail(kind, d.uuid, fmt.Sprintf("provider %s: node %s, and not reserved: %v", d.uuid, doubtText(d.why), err))
			continue
		}
		done[d.uuid] = true
		c.state.update(d.uuid, func(k *known) { k.DoubtGeneration = gen })
		c.log.Info("provider fully reserved", NodeAttrs(d.uuid, d.name, "reason", string(d.why))...)
	}
	return done
}

// doubtText says what the engine doubts, for messages.
func doubtText(why baremetal.ReservedReason) string {
	switch why {
	case baremetal.ReservedPendingDeletion:
		return "proven deleted once"
	case baremetal.ReservedLeftScope:
		return "out of this engine's scope"
	}
	return "quarantined"
}

// reserveFully sets reserved = total on every class of a provider, in
// one write with its generation, retried on conflicts; it returns the
// generation after. A provider already fully reserved costs one read.
func (c *cycle) reserveFully(ctx context.Context, uuid, name string) (placement.Generation, error) {
	var after placement.Generation
	ctx, answer := placement.WithAnswerID(ctx)
	err := c.e.retryOnConflict(ctx, func() error {
		gen, inv, err := c.e.pc.Inventories(ctx, uuid)
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
			before := gen
			if gen, err = c.w.SetInventories(ctx, uuid, gen, inv); err != nil {
				return onConflict(err)
			}
			c.written(ctx, uuid, name, OpInventory, before, gen, answer)
		}
		after = gen
		c.state.invalidate(uuid)
		return nil
	})
	return after, err
}

// quarantinedProviders lists the owned providers of quarantined nodes.
// A quarantined node without a provider gets none.
func quarantinedProviders(problems []Problem, listed map[string]placement.Generation) []doubtful {
	var out []doubtful
	for _, p := range problems {
		u := strings.ToLower(p.NodeUUID)
		if gen, ok := listed[u]; ok && p.Quarantined() {
			out = append(out, doubtful{u, baremetal.ReservedQuarantined, gen, p.NodeName})
		}
	}
	return out
}

// quarantine records the quarantined nodes' outcomes, after reserving
// the providers they have (listed nil: the providers are unknown, the
// outcomes are recorded alone).
func (c *cycle) quarantine(ctx context.Context, listed map[string]placement.Generation) {
	reserved := c.reserveDoubts(ctx, quarantinedProviders(c.problems, listed))
	for _, p := range c.problems {
		if !p.Quarantined() {
			continue
		}
		o := Outcome{Node: strings.ToLower(p.NodeUUID), Name: p.NodeName, Kind: KindQuarantined, Reason: p.Code, Message: p.Reason}
		if reserved[o.Node] {
			o.Reserved = string(baremetal.ReservedQuarantined)
			o.Message += "; its provider is fully reserved until then"
			c.r.Reserved[o.Reserved]++
		}
		c.outcome(o, Observed{})
	}
}

// reservePending fully reserves the providers of nodes proven deleted
// (of those asked) but not deleted in this cycle: the first proof, or the
// grace still running. It returns those reserved.
func (c *cycle) reservePending(ctx context.Context, asked, deleted, ready []string, owned map[string]placement.Generation) map[string]bool {
	skip := make(map[string]bool, len(ready))
	for _, u := range ready {
		skip[u] = true
	}
	isAsked := make(map[string]bool, len(asked))
	for _, u := range asked {
		isAsked[u] = true
	}
	var ds []doubtful
	for _, u := range deleted {
		if gen, ok := owned[u]; ok && isAsked[u] && !skip[u] {
			ds = append(ds, doubtful{u, baremetal.ReservedPendingDeletion, gen, ""})
			skip[u] = true
		}
	}
	reserved := c.reserveDoubts(ctx, ds)
	c.r.Reserved[string(baremetal.ReservedPendingDeletion)] += len(reserved)
	return reserved
}

// reserveLeft fully reserves the providers of nodes that exist but are
// no longer listed (of those asked): they left this engine's scope, and
// no engine vouches for them until another takes them over, which flips
// the owner marker and writes the node's values. It returns those
// reserved; their holds stay (settleHolds). Beside nova, one a hold
// already keeps is not reserved again (holdleft.go).
func (c *cycle) reserveLeft(ctx context.Context, asked, present []string, owned map[string]placement.Generation) map[string]bool {
	if len(present) == 0 {
		return nil
	}
	isAsked := setOf(asked)
	var ds []doubtful
	for _, u := range present {
		if gen, ok := owned[u]; ok && isAsked[u] {
			ds = append(ds, doubtful{u, baremetal.ReservedLeftScope, gen, ""})
		}
	}
	held := c.leftHeld(ds) // holdleft.go
	reserved := c.reserveDoubts(ctx, slices.DeleteFunc(ds, func(d doubtful) bool { return held[d.uuid] }))
	for u := range held {
		reserved[u] = true
	}
	c.r.Reserved[string(baremetal.ReservedLeftScope)] += len(reserved)
	c.mu.Lock()
	c.left = reserved
	c.mu.Unlock()
	return reserved
}
