package placement

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the wait before retry n (n >= 1): a ceiling of base·2ⁿ⁻¹,
// capped at max, with full jitter over (0, ceiling], so writers that
// collided do not collide again in lock step (nova bug 1770220). Both
// this client's retries and the engine's conflict retries use it.
func Backoff(base, max time.Duration, n int) time.Duration {
	ceiling := min(base<<(n-1), max)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
