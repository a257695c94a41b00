package coord_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
)

// Watch wakes a member when a peer registers, when a peer releases a
// claim, and when a dead peer's lease expires; the member's own steady
// syncs do not wake it.
func TestWatchWakesOnPeersComingAndGoing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	div := coord.Division{Partitions: 8}
	a := r.member("a", div)
	woken := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Watch(ctx, func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	sync(t, a) // a holds all 8
	// A watch only sees what happens after it starts: a first member's
	// steady syncs from here on must not wake it.
	time.Sleep(200 * time.Millisecond)
	drain(woken)
	sync(t, a)
	expectNone(t, woken, "a's own steady sync")

	proxy := etcdtest.NewProxy(t, r.url)
	b := r.member("b", div, proxy.URL())
	expectWake(t, woken, "b registered")
	cs := map[string]*coord.Coordinator{"a": a, "b": b}
	settle(t, cs, 8) // a released b's share: more wakes, drained below
	drain(woken)
	sync(t, a)
	expectNone(t, woken, "a's steady sync beside b")

	proxy.Sever() // b dies: no renewal, no revoke
	expectWake(t, woken, "b's lease expired")
}

func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

func expectWake(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(4 * ttl):
		t.Fatalf("no wake after %s", what)
	}
}

// expectNone: a wake that comes late would pass unseen, never fail wrongly.
func expectNone(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
		t.Fatalf("woken by %s", what)
	case <-time.After(500 * time.Millisecond):
	}
}
