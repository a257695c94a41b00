package engine_test

import (
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// BenchmarkFleetTakeOver measures, beside nova with the fleet's one
// marker, an engine taking over the partition of a departed peer (half
// the fleet) where nothing changed since the peer's last cycle: Placement
// requests per provider taken over (no marker to flip; the shared
// record's seen stands for a read while the generation holds), and with
// 1% of the nodes changed meanwhile (one write each), and the cycle's
// wall time. Rerun:
// go test -run '^$' -bench FleetTakeOver -benchtime 1x ./engine/
func BenchmarkFleetTakeOver(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		for _, changed := range []int{0, n / 100} {
			b.Run(fmt.Sprintf("%d/changed=%d", n, changed), func(b *testing.B) { benchFleetTakeOver(b, n, changed) })
		}
	}
}

// benchFleetTakeOver is one case: n nodes, the first changed of them
// changed (both partitions) before the take-over.
func benchFleetTakeOver(b *testing.B, n, changed int) {
	var requests, taken int
	for b.Loop() {
		b.StopTimer()
		a, o, store := fleetRigs(b, n)
		a.cleanCycle()
		o.cleanCycle()
		taken = len(a.state.KnownProviders())
		a.src.set(func(s *source) {
			for i := range changed {
				s.nodes[i].Maintenance = true
			}
		})
		o.eng.SetScope(engine.Scope{Partitions: 2, Held: []int{0, 1}}, nil)
		o.eng.ShareRecord(store, true)
		a.fake.ResetRequests()
		b.StartTimer()
		if rep := o.cycle(); len(rep.Errors) > 0 || rep.Created != 0 || rep.Updated != changed {
			b.Fatalf("take-over: updated %d of %d changed, errors %+v", rep.Updated, changed, rep.Errors)
		}
		requests = len(a.fake.Requests())
	}
	b.ReportMetric(float64(requests)/float64(taken), "requests/provider")
	b.ReportMetric(float64(requests), "requests")
}
