package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// Readiness follows the recent cycles: 503 after a failed cycle, 200
// again after a good one. Liveness follows the loop only: failing cycles
// keep it live; a loop that does nothing for unhealthy_after+1 intervals
// is not.
func TestReadinessFollowsRecentCyclesAndLivenessTheLoop(t *testing.T) {
	r := newRig(t, 2)
	h := r.ops.Handler()
	if code, body := get(t, h, "/livez"); code != 200 || !strings.Contains(body, "live: start") {
		t.Fatalf("livez at start: %d %s", code, body)
	}
	r.cycle()
	if code, _ := get(t, h, "/readyz"); code != 200 {
		t.Fatalf("readyz after a good cycle: %d", code)
	}
	r.src.set(func(s *source) { s.failNodes = errors.New("ironic down") })
	for i := 1; i <= 2; i++ {
		r.cycle()
		if code, body := get(t, h, "/readyz"); code != 503 {
			t.Fatalf("readyz after %d failed cycles: %d %s", i, code, body)
		}
		if code, body := get(t, h, "/livez"); code != 200 {
			t.Fatalf("livez while cycles fail: %d %s", code, body)
		}
	}
	r.src.set(func(s *source) { s.failNodes = nil })
	r.cycle()
	if code, body := get(t, h, "/readyz"); code != 200 {
		t.Fatalf("readyz after a good cycle again: %d %s", code, body)
	}
	r.clock.advance(4*time.Minute + time.Second) // unhealthy_after 3, +1, of 1m
	if code, body := get(t, h, "/livez"); code != 503 || !strings.Contains(body, "not live") {
		t.Fatalf("livez with an idle loop: %d %s", code, body)
	}
}

// Readiness does not latch: failed cycles, not only failing services,
// turn it 503, with the count and times; one good cycle turns it back.
func TestReadinessDoesNotLatch(t *testing.T) {
	c := &clock{t: time.Unix(1_000, 0)}
	o := ops.New(c.now)
	o.Configure(ops.Info{Interval: time.Minute, UnhealthyAfter: 3, History: 10})
	run := func(r engine.Report) {
		c.advance(time.Minute)
		o.CycleStarted()
		o.CycleDone(r, c.now())
	}
	good := engine.Report{Unchanged: 1}
	bad := engine.Report{Errors: []engine.Error{{Kind: engine.ErrPlacement, Message: "boom"}}, Failed: 1}
	run(good)
	for i := 1; i <= 2; i++ {
		run(bad)
		ok, why := o.Ready()
		if ok || !strings.Contains(why, fmt.Sprintf("the last %d cycle(s) failed", i)) {
			t.Fatalf("after %d failed cycles: %v %s", i, ok, why)
		}
		if ok, why := o.Live(); !ok {
			t.Fatalf("live while cycles fail: %s", why)
		}
	}
	run(good)
	if ok, why := o.Ready(); !ok {
		t.Fatalf("after a good cycle: %s", why)
	}
}
