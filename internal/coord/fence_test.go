package coord

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// fenceRig is a Coordinator with only what Fence needs, and a lease
// registered now on the bubble's clock.
func fenceRig(ttl time.Duration) (*Coordinator, *lease) {
	c := &Coordinator{log: slog.New(slog.DiscardHandler), cfg: Config{Member: "m"}}
	now := time.Now()
	l := &lease{ttl: ttl, registered: now, lost: make(chan struct{})}
	l.extend(now, ttl)
	return c, l
}

// ended waits on the bubble until ctx ends or nothing else can happen,
// and says whether it ended.
func ended(ctx context.Context) bool {
	synctest.Wait()
	return ctx.Err() != nil
}

// Without renewals, a cycle's fence ends exactly a quarter TTL before
// the earliest moment etcd could expire the lease: at ¾ TTL.
func TestFenceEndsAtThreeQuartersOfAnUnrenewedLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 10 * time.Second
		c, l := fenceRig(ttl)
		ctx, cancel := c.Fence(t.Context(), Assignment{lease: l})
		defer cancel()
		time.Sleep(ttl*3/4 - time.Nanosecond)
		if ended(ctx) {
			t.Fatal("fence ended before ¾ TTL")
		}
		time.Sleep(time.Nanosecond)
		if !ended(ctx) || !errors.Is(context.Cause(ctx), errFenced) {
			t.Fatalf("at ¾ TTL: fence %v (cause %v); want it ended, fenced", ctx.Err(), context.Cause(ctx))
		}
	})
}

// A renewal moves the deadline, counted from when the renewal was sent,
// never from when its answer came.
func TestFenceFollowsRenewalsFromTheirSendTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 8 * time.Second
		c, l := fenceRig(ttl)
		ctx, cancel := c.Fence(t.Context(), Assignment{lease: l})
		defer cancel()
		time.Sleep(2 * time.Second)
		sent := time.Now()
		time.Sleep(time.Second) // the answer comes a second later
		l.extend(sent, ttl)     // valid until sent + ¾ TTL = 2s + 6s
		time.Sleep(6*time.Second - time.Second - time.Nanosecond)
		if ended(ctx) {
			t.Fatal("fence ended before the renewed deadline")
		}
		time.Sleep(time.Nanosecond)
		if !ended(ctx) {
			t.Fatal("fence outlived the renewal sent 8s ago by more than ¾ TTL")
		}
	})
}

// A lease etcd reports lost ends the fence at once; cancelling the cycle
// ends it without calling it fenced; no lease, no fence to write under.
func TestFenceEndsAtOnceWhenTheLeaseIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, l := fenceRig(time.Minute)
		ctx, cancel := c.Fence(t.Context(), Assignment{lease: l})
		defer cancel()
		time.Sleep(time.Second)
		close(l.lost)
		if !ended(ctx) || !errors.Is(context.Cause(ctx), errFenced) {
			t.Fatalf("lost lease: fence %v", context.Cause(ctx))
		}
		ctx2, cancel2 := c.Fence(t.Context(), Assignment{lease: &lease{ttl: time.Minute, until: time.Now().Add(time.Minute), lost: make(chan struct{})}})
		cancel2()
		if !ended(ctx2) || errors.Is(context.Cause(ctx2), errFenced) {
			t.Fatalf("cancelled cycle: cause %v; want plain cancellation", context.Cause(ctx2))
		}
		ctx3, cancel3 := c.Fence(t.Context(), Assignment{}) // a failed Sync's: no lease
		defer cancel3()
		if ctx3.Err() == nil {
			t.Fatal("a fence without a lease lets a cycle write")
		}
	})
}
