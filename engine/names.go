package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/rpengine/rpengine/engine/placement"
)

// ErrNameBudget is the error of a custom trait or resource class not
// created because this cycle's budget of new names is spent: it waits for
// a later cycle, so one node with thousands of custom traits cannot
// monopolise Placement.
var ErrNameBudget = errors.New("budget of new traits and resource classes for this cycle spent")

// DefaultNewNames is the default budget of new custom traits and
// resource classes per cycle: a real fleet has tens of them, created on
// the first cycle; a hostile plugin's thousands take many cycles.
const DefaultNewNames = 100

// nameBook is what this process learnt of Placement's names: custom
// traits and resource classes that exist (created or found; forgotten
// when Placement says one is missing: forgetMissing), standard traits it
// knows, and standard traits it lacks (until restart: Placement learns
// standard traits only on upgrade). A plan works on a copy.
type nameBook struct {
	mu      sync.Mutex
	exist   map[string]bool // "trait:X", "rc:X"
	unknown map[string]bool // standard traits Placement lacks
	// creating lets one sync create a name (or ask which standard traits
	// exist) while the others that need it wait for it: on a new engine's
	// first cycle every worker needed the owner trait at once, and each
	// sent its own PUT.
	creating singleflight.Group
}

func newNameBook() *nameBook {
	return &nameBook{exist: map[string]bool{}, unknown: map[string]bool{}}
}

func (b *nameBook) clone() *nameBook {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &nameBook{exist: maps.Clone(b.exist), unknown: maps.Clone(b.unknown)}
}

func (b *nameBook) has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exist[key]
}

func (b *nameBook) add(key string) {
	b.mu.Lock()
	b.exist[key] = true
	b.mu.Unlock()
}

// isUnknown reports a standard trait found missing from Placement.
func (b *nameBook) isUnknown(trait string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unknown[trait]
}

// learn records which of asked Placement lacks.
func (b *nameBook) learn(asked, unknown []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range asked {
		if slices.Contains(unknown, n) {
			b.unknown[n] = true
		} else {
			b.exist["trait:"+n] = true
		}
	}
}

// anyUnknown says whether any trait was found missing: most Placements
// know every trait the engine sends, and a cycle then checks none of its
// 100,000 providers' traits.
func (b *nameBook) anyUnknown() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.unknown) > 0
}

// unknownList lists, sorted, the standard traits found missing so far.
func (b *nameBook) unknownList() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.unknown))
}

// budget counts one cycle's new names.
type budget struct {
	mu           sync.Mutex
	limit, spent int
	waiting      map[string]bool
}

// take spends one unit on key, or says it must wait.
func (b *budget) take(key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent >= b.limit {
		if b.waiting == nil {
			b.waiting = map[string]bool{}
		}
		b.waiting[key] = true
		return fmt.Errorf("ensure %s: %w", key, ErrNameBudget)
	}
	b.spent++
	return nil
}

// summary says how many new names wait for a later cycle, with a few of
// them as examples, in one line ("" if none).
func (b *budget) summary() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.waiting)
	if n == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(b.waiting))
	ex := names[:min(len(names), 3)]
	for i, k := range ex {
		if len(k) > 64 {
			ex[i] = k[:64] + "..."
		}
	}
	return fmt.Sprintf("%d new traits or resource classes wait for later cycles (budget %d per cycle, placement new_names_per_cycle), e.g. %s",
		n, b.limit, strings.Join(ex, ", "))
}

// ensure creates a custom trait or resource class (key "trait:X" or
// "rc:X") once per process, and again after Placement said it lacks it,
// within the cycle's budget.
func (c *cycle) ensure(ctx context.Context, key string) error {
	if c.names.has(key) {
		return nil
	}
	_, err, _ := c.names.creating.Do(key, func() (any, error) {
		if c.names.has(key) { // created while this one came
			return nil, nil
		}
		if err := c.budget.take(key); err != nil {
			return nil, err
		}
		kind, name, _ := strings.Cut(key, ":")
		if err := c.w.CreateName(ctx, kind, name); err != nil {
			return nil, fmt.Errorf("ensure %s: %w", key, err)
		}
		c.names.add(key)
		return nil, nil
	})
	return err
}

// knownTraits creates the custom traits of ts and drops standard ones
// this Placement does not know (e.g. from a newer os-traits): one unknown
// trait must not block a node's traits, let alone its inventory, every
// cycle (nova's _ensure_traits did). Traits waiting for the budget are
// left out too; the cycle reports them.
func (c *cycle) knownTraits(ctx context.Context, ts []string) ([]string, error) {
	var ask, drop []string
	for _, t := range ts {
		switch {
		case strings.HasPrefix(t, "CUSTOM_"):
			err := c.ensure(ctx, "trait:"+t)
			if errors.Is(err, ErrNameBudget) {
				drop = append(drop, t)
			} else if err != nil {
				return nil, err
			}
		case c.names.isUnknown(t):
			drop = append(drop, t)
		case !c.names.has("trait:" + t):
			ask = append(ask, t)
		}
	}
	if len(ask) > 0 {
		unknown, err := c.askTraits(ctx, ask)
		if err != nil {
			return nil, err
		}
		drop = append(drop, unknown...)
	}
	if len(drop) == 0 {
		return ts, nil
	}
	return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return slices.Contains(drop, t) }), nil
}

// askTraits learns which of the standard traits ask Placement lacks, and
// returns them: one request for the syncs that ask the same at once.
func (c *cycle) askTraits(ctx context.Context, ask []string) ([]string, error) {
	v, err, _ := c.names.creating.Do("ask:"+strings.Join(ask, ","), func() (any, error) {
		unknown, err := c.e.pc.UnknownTraits(ctx, ask)
		if err != nil {
			return nil, err
		}
		c.names.learn(ask, unknown)
		if len(unknown) > 0 {
			c.e.log.Warn("traits unknown to Placement left out", "traits", unknown)
		}
		return unknown, nil
	})
	unknown, _ := v.([]string)
	return unknown, err
}

// ensureClasses creates the custom resource classes of inv.
func (c *cycle) ensureClasses(ctx context.Context, inv map[string]placement.Inventory) error {
	for rc := range inv {
		if strings.HasPrefix(rc, "CUSTOM_") {
			if err := c.ensure(ctx, "rc:"+rc); err != nil {
				return err
			}
		}
	}
	return nil
}

// write is writeOnce, sent again once when Placement answered that a
// custom class or trait the name book holds as existing is missing (a
// Placement restored empty, or from a backup older than the name): the
// book forgets it, and the second try creates it again. Once per write
// bounds it; a refusal that names nothing the book holds is returned as
// it came.
func (c *cycle) write(ctx context.Context, w Write, o Observed) (Observed, error) {
	next, err := c.writeOnce(ctx, w, o)
	if err != nil && c.names.forgetMissing(err) {
		c.e.log.Warn("Placement lacks names this engine created: creating them again", "provider", w.UUID, "error", err)
		next, err = c.writeOnce(ctx, w, o)
	}
	return next, err
}

// forgetMissing reads a refusal that says resource classes or traits are
// missing — Placement's 400 "No such resource class X." (inside the
// inventory's "Unknown resource class in inventory ..."), "No such trait
// X, Y", "No such trait(s): X, Y." and their 404 forms — and forgets
// those of its names the book holds as existing. It reports whether a
// second try may pass: it forgot one, or a custom name it names is
// already forgotten (another provider's write met the same refusal first
// and its ensure may not have created it again yet; this one's will).
func (b *nameBook) forgetMissing(err error) bool {
	var api *placement.APIError
	if !errors.As(err, &api) || api.Status != 400 && api.Status != 404 {
		return false
	}
	kind := ""
	switch {
	case strings.Contains(api.Detail, "No such resource class"):
		kind = "rc:"
	case strings.Contains(api.Detail, "No such trait"):
		kind = "trait:"
	default:
		return false
	}
	isName := func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' }
	b.mu.Lock()
	defer b.mu.Unlock()
	retry := false
	for _, name := range strings.FieldsFunc(api.Detail, func(r rune) bool { return !isName(r) }) {
		if b.exist[kind+name] {
			delete(b.exist, kind+name)
			retry = true
		} else if strings.HasPrefix(name, "CUSTOM_") {
			retry = true
		}
	}
	return retry
}
