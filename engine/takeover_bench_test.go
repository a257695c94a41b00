package engine_test

import (
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// BenchmarkTakeOver measures one engine taking over every provider of a
// departed peer in the fake Placement: Placement requests per provider
// taken over (the goal is ≤ 1.5) and the cycle's wall time. Rerun:
// go test -run '^$' -bench TakeOver -benchtime 1x ./engine/
func BenchmarkTakeOver(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		for _, shared := range []bool{true, false} {
			b.Run(fmt.Sprintf("%d/shared=%v", n, shared), func(b *testing.B) { benchTakeOver(b, n, shared) })
		}
	}
}

// benchTakeOver is one BenchmarkTakeOver case: with or without the
// shared record (whose entries let the taker skip the reads).
func benchTakeOver(b *testing.B, n int, shared bool) {
	var requests int
	for b.Loop() {
		b.StopTimer()
		a := newRig(b, n)
		store := &memStore{entries: map[string][]byte{}}
		if shared {
			a.eng.ShareRecord(store, false)
		}
		a.cleanCycle()
		o := &rig{t: b, fake: a.fake, src: a.src, opts: a.opts}
		o.ownerT = engine.OwnerTrait("other")
		o.pol = engine.Policy{OwnerTrait: o.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
			MayTakeOver: func(owner string) bool { return owner == a.ownerT }}
		o.state, _ = engine.LoadState("", "")
		o.restart()
		if shared {
			o.eng.ShareRecord(store, true)
		}
		a.fake.ResetRequests()
		b.StartTimer()
		if rep := o.cycle(); rep.Updated != n || len(rep.Errors) > 0 {
			b.Fatalf("take-over: updated %d of %d, errors %v", rep.Updated, n, rep.Errors)
		}
		requests = len(a.fake.Requests())
	}
	b.ReportMetric(float64(requests)/float64(n), "requests/provider")
}

// BenchmarkRestartBesideAnotherOwner measures the first cycle of a new
// process, with no state, in a fleet whose providers another engine owns
// and keeps: Placement requests in all (the goal is <= 3). Rerun:
// go test -run '^$' -bench RestartBeside -benchtime 1x ./engine/
func BenchmarkRestartBesideAnotherOwner(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var requests int
			for b.Loop() {
				b.StopTimer()
				o := newRig(b, n)
				o.cleanCycle()
				me := &rig{t: b, fake: o.fake, src: o.src, opts: o.opts}
				me.ownerT = engine.OwnerTrait("me")
				me.pol = engine.Policy{OwnerTrait: me.ownerT, MarkerTraits: []string{"COMPUTE_NODE"}}
				me.state, _ = engine.LoadState("", "")
				me.restart()
				o.fake.ResetRequests()
				b.StartTimer()
				if rep := me.cycle(); rep.Failed != n {
					b.Fatalf("restart: %d of %d left to their owner", rep.Failed, n)
				}
				requests = len(o.fake.Requests())
			}
			b.ReportMetric(float64(requests), "requests")
		})
	}
}
