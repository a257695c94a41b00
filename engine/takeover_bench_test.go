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
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var requests int
			for b.Loop() {
				b.StopTimer()
				a := newRig(b, n)
				store := &memStore{entries: map[string][]byte{}}
				a.eng.ShareRecord(store, false)
				a.cleanCycle()
				o := &rig{t: b, fake: a.fake, src: a.src, opts: a.opts}
				o.ownerT = engine.OwnerTrait("other")
				o.pol = engine.Policy{OwnerTrait: o.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
					MayTakeOver: func(owner string) bool { return owner == a.ownerT }}
				o.state, _ = engine.LoadState("", "")
				o.restart()
				o.eng.ShareRecord(store, true)
				a.fake.ResetRequests()
				b.StartTimer()
				if rep := o.cycle(); rep.Updated != n || len(rep.Errors) > 0 {
					b.Fatalf("take-over: updated %d of %d, errors %v", rep.Updated, n, rep.Errors)
				}
				requests = len(a.fake.Requests())
			}
			b.ReportMetric(float64(requests)/float64(n), "requests/provider")
		})
	}
}
