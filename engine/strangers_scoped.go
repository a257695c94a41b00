package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Observe mode with a scope by shard or conductor group: a provider
// named as a node this engine does not list may be another scope's node
// or a deleted one's. The source's proof of deletion (DeletionChecker)
// tells them apart, a bounded number a cycle; the answers outlive the
// cycle (an observe cycle runs over copies), so each provider is asked
// about once, and one proven present again after strangerRecheck.

// maxStrangerProofs bounds the providers asked about in one cycle.
const maxStrangerProofs = 100

// strangerRecheck is how long a node proven present (another scope's)
// is not asked about again: it may be deleted since.
const strangerRecheck = 30 * time.Minute

// strangerBook keeps the source's answers by provider uuid.
type strangerBook struct {
	mu      sync.Mutex
	gone    map[string]bool
	present map[string]time.Time
}

// provenStrangers keeps of candidates (providers of unlisted nodes no
// engine owns, sorted) those whose node the source proves deleted: known
// before, or asked now (at most maxStrangerProofs). Without a proof of
// deletion, none.
func (c *cycle) provenStrangers(ctx context.Context, candidates []string) []string {
	checker, ok := ProvesDeletion(c.e.src)
	if !ok {
		return nil
	}
	b := &c.e.strangers
	now := c.e.now()
	gone, ask := b.split(candidates, now)
	if len(ask) == 0 {
		return gone
	}
	deleted, present, err := checker.ConfirmDeleted(ctx, ask)
	if err != nil {
		c.warn(fmt.Sprintf("providers of nodes outside the scope: the source's proof of deletion failed: %v", err))
		return gone
	}
	b.learn(deleted, present, now)
	gone = append(gone, deleted...)
	slices.Sort(gone)
	return gone
}

// split returns the candidates known gone, and those to ask about now;
// it forgets the answers about providers no longer candidates.
func (b *strangerBook) split(candidates []string, now time.Time) (gone, ask []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	is := setOf(candidates)
	for u := range b.gone {
		if !is[u] {
			delete(b.gone, u)
		}
	}
	for u, at := range b.present {
		if !is[u] || now.Sub(at) >= strangerRecheck {
			delete(b.present, u)
		}
	}
	for _, u := range candidates {
		switch _, present := b.present[u]; {
		case b.gone[u]:
			gone = append(gone, u)
		case !present && len(ask) < maxStrangerProofs:
			ask = append(ask, u)
		}
	}
	return gone, ask
}

// learn keeps the source's answers.
func (b *strangerBook) learn(deleted, present []string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone == nil {
		b.gone, b.present = map[string]bool{}, map[string]time.Time{}
	}
	for _, u := range deleted {
		b.gone[u] = true
	}
	for _, u := range present {
		b.present[u] = now
	}
}
