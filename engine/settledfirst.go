package engine

import (
	"context"

	"github.com/rpengine/rpengine/engine/placement"
)

// settledFirst syncs, in one pass before the workers start, the
// providers intend judged settled (syncSettled: nothing to send), and
// returns the others in their order (order's, or desired's if nil) and
// how many of those come before the flips. One goroutine takes each
// lock uncontended: handed to the workers one by one, these providers'
// locks (outcomes, tally) were a seventh of an idle cycle at 100,000.
// Their outcomes come in desired's order, which is the report's.
func (c *cycle) settledFirst(ctx context.Context, desired []Desired, listed map[string]placement.Generation,
	order []int, flips int, done *int) ([]int, int) {
	if c.settled == nil {
		return order, flips
	}
	if why, _ := c.halted(); why != "" {
		return order, flips // the workers defer them all
	}
	for p := range desired {
		if i := at(order, p); c.settled[i] {
			res, conflicts, err := c.syncAt(ctx, i, desired[i], listed)
			c.counted(desired[i], res, conflicts, err, done, len(desired))
		}
	}
	return unsettled(c.settled, order, flips)
}

// unsettled is the indexes at each position of order (nil: 0 to
// len(settled)-1) not settled, in order, and how many of them come
// before position flips. It is never nil.
func unsettled(settled []bool, order []int, flips int) ([]int, int) {
	rest, before := []int{}, flips
	for p := range settled {
		switch i := at(order, p); {
		case !settled[i]:
			rest = append(rest, i)
		case p < flips:
			before--
		}
	}
	return rest, before
}

// at is the index at position p of order (nil: p).
func at(order []int, p int) int {
	if order == nil {
		return p
	}
	return order[p]
}
