package engine

import (
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/hostabi"
)

// The proof ledger: a provider is deleted only after the source proved
// its node deleted in two consecutive cycles (rounds), the first at least
// DeleteGrace before. A cycle without a proof (the node listed, present,
// unknown, or a failed listing) restarts the count: two proofs with a gap
// prove nothing about the gap. Every rule about proofs is in this file.

// consecutive says whether k holds a proof from the round before round.
func consecutive(k known, round int64) bool {
	return !k.GoneSince.IsZero() && k.ProofRound == round-1
}

// proofCount says which proof this cycle's is, for each uuid proven
// deleted: 2 when the previous cycle proved it too, else 1. Read before
// provenGone records this cycle's proofs.
func (c *cycle) proofCount(deleted []string) map[string]int {
	out := make(map[string]int, len(deleted))
	for _, u := range deleted {
		k, _ := c.state.get(u)
		out[u] = 1
		if consecutive(k, c.round) {
			out[u] = 2
		}
	}
	return out
}

// provenGone records this cycle's proofs and returns the uuids proven
// deleted in this cycle and in the one before it, the first at least
// DeleteGrace ago. Answers about uuids the engine did not ask for are
// ignored.
func (c *cycle) provenGone(asked, deleted, present []string) []string {
	now := c.e.now()
	proofs := c.state.anyProof() // none: nothing to forget, the usual case
	if !proofs && len(deleted) == 0 {
		return nil
	}
	isAsked := setOf(asked) // a set, not a search per answer: 100,000 unlisted cost N²
	for _, uuid := range present {
		if proofs && isAsked[uuid] {
			c.state.forgetProof(uuid)
		}
	}
	var ready []string
	for _, uuid := range deleted {
		if !isAsked[uuid] {
			continue
		}
		k, _ := c.state.get(uuid)
		again := consecutive(k, c.round)
		if again && now.Sub(k.GoneSince) >= c.e.opts.DeleteGrace {
			ready = append(ready, uuid)
		}
		c.state.update(uuid, func(k *known) {
			if !again {
				k.GoneSince = now
			}
			k.ProofRound = c.round
		})
	}
	return ready
}

// forgetProofs drops the proofs of deletion of nodes the source lists
// (again: re-enrolled with the same uuid). A delete needs two proofs of
// the current deletion, not one left over from an earlier one.
func (c *cycle) forgetProofs(nodes []hostabi.Node) {
	if !c.state.anyProof() { // the usual case: no need to look up every node
		return
	}
	for _, n := range nodes {
		u := strings.ToLower(n.UUID)
		if k, ok := c.state.get(u); ok && !k.GoneSince.IsZero() {
			c.state.update(u, func(k *known) { k.GoneSince, k.ProofRound = time.Time{}, 0 })
		}
	}
}

// proofOutcomes records the unlisted providers not ready for deletion:
// pending their next proof, or kept.
func (c *cycle) proofOutcomes(asked, deleted, present, ready []string, proofs map[string]int, reserved, left map[string]bool) {
	isReady, isDeleted, isPresent := setOf(ready), setOf(deleted), setOf(present)
	c.results.reserve(len(asked))
	for _, u := range asked {
		o := Outcome{Node: u, Kind: KindKept, ProofsNeeded: 2, Proof: proofs[u]}
		if reserved[u] {
			o.Reserved = string(baremetal.ReservedPendingDeletion)
		}
		switch {
		case isReady[u]:
			continue // deleted, blocked or failed: recorded by the caller
		case isDeleted[u] && proofs[u] >= 2:
			o.Kind, o.Reason, o.Message = KindPendingDeletion, ReasonGrace, "proven deleted twice; waiting for engine.delete_grace"
		case isDeleted[u]:
			o.Kind, o.Message = KindPendingDeletion, "proven deleted once, fully reserved; the next cycle's proof deletes it"
		case isPresent[u] && left[u]:
			o.Reserved = string(baremetal.ReservedLeftScope)
			o.Reason, o.Message, o.ProofsNeeded = ReasonNodePresent, "not listed, but the plugin says the node exists: it left "+
				"this engine's scope; fully reserved until another engine takes its provider over or it comes back", 0
		case isPresent[u]:
			o.Reason, o.Message, o.ProofsNeeded = ReasonNodePresent, "not listed, but the plugin says the node exists", 0
		default:
			o.Reason, o.Message, o.ProofsNeeded = ReasonProofUnknown, "not listed; the plugin did not say", 0
		}
		c.outcome(o, Observed{})
	}
}

// nextRound counts a cycle and returns its number, and whether a
// deletion proof is pending: then the count must reach the file before
// the cycle acts, or a crash could hide this cycle from the next process
// and make two proofs around it look consecutive.
func (s *State) nextRound() (round int64, pending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.round++
	if s.proofs > 0 {
		s.dirty = true
		return s.round, true
	}
	return s.round, false
}

// anyProof says whether some provider has a proof of deletion pending.
func (s *State) anyProof() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proofs > 0
}

// forgetProof drops a provider's proof of deletion, if it has one: a
// node proven present every cycle must not rewrite the state file.
func (s *State) forgetProof(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.providers.get(uuid); ok && (!old.GoneSince.IsZero() || old.ProofRound != 0) {
		k := old
		k.GoneSince, k.ProofRound = time.Time{}, 0
		s.set(uuid, old, k)
		s.dirty = true
	}
}

// setOf is xs as a set, for lookups inside a loop over all providers.
func setOf(xs []string) map[string]bool {
	out := make(map[string]bool, len(xs))
	for _, x := range xs {
		out[x] = true
	}
	return out
}
