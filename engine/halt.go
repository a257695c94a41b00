package engine

import (
	"fmt"
	"time"
)

// maxFailedInARow ends a cycle that makes no progress: once this many
// Placement requests in a row got no answer or a 5xx, the providers not
// yet started wait for the next cycle, with one error naming the cause,
// instead of a 100,000-provider cold start failing them one by one for
// an hour while the health page still sees requests go out. A cycle that
// gets answers (a 409, a 404) goes on.
const maxFailedInARow = 16

// halted says why a cycle must start no more work — a stop, or a
// Placement that does not answer — with the kind of its error; "" to go on.
func (c *cycle) halted() (string, ErrorKind) {
	if stopping(c.e.opts.Stop) {
		return "stopping", ErrDeferred
	}
	if t := c.e.pc.Trouble(); t.Failures >= maxFailedInARow {
		return fmt.Sprintf("placement failing: %d requests in a row failed over %s (last: %s); the cycle ends early",
			t.Failures, time.Since(t.Since).Round(time.Second), t.Last), ErrPlacement
	}
	return "", ""
}
