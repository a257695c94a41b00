package placement

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrWriteBudget is the error of a custom trait or resource class not
// created because this cycle's budget of new names is spent: it waits for
// a later cycle, so one node with thousands of custom traits cannot
// monopolise Placement.
var ErrWriteBudget = errors.New("budget of new traits and resource classes for this cycle spent")

// DefaultNewNames is the default budget of new custom traits and
// resource classes per cycle: a real fleet has tens of them, created on
// the first cycle; a hostile plugin's thousands take many cycles.
const DefaultNewNames = 100

// budget counts the names created since BeginCycle.
type budget struct {
	limit, spent int
	waiting      map[string]bool
}

// BeginCycle resets the budget of new names.
func (c *Client) BeginCycle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget.spent, c.budget.waiting = 0, map[string]bool{}
}

// take spends one unit of the budget on key, or says it must wait.
// The caller holds c.mu.
func (c *Client) take(key string) error {
	b := &c.budget
	if b.spent >= b.limit {
		if b.waiting == nil {
			b.waiting = map[string]bool{}
		}
		b.waiting[key] = true
		return fmt.Errorf("ensure %s: %w", key, ErrWriteBudget)
	}
	b.spent++
	return nil
}

// Waiting says how many new names wait for a later cycle since
// BeginCycle, with a few of them as examples, in one line ("" if none).
func (c *Client) Waiting() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.budget.waiting)
	if n == 0 {
		return ""
	}
	names := make([]string, 0, n)
	for k := range c.budget.waiting {
		names = append(names, k)
	}
	slices.Sort(names)
	ex := names[:min(len(names), 3)]
	for i, k := range ex {
		if len(k) > 64 {
			ex[i] = k[:64] + "..."
		}
	}
	return fmt.Sprintf("%d new traits or resource classes wait for later cycles (budget %d per cycle, placement new_names_per_cycle), e.g. %s",
		n, c.budget.limit, strings.Join(ex, ", "))
}
