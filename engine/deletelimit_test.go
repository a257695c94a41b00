package engine_test

import "testing"

// engine.delete_limit is a fraction of the owned providers, rounded down,
// but never below one: a small fleet can still lose a node. Two at once
// are over the limit there.
func TestDeleteLimitAlwaysAllowsOneDelete(t *testing.T) {
	for _, tc := range []struct {
		gone        int
		wantDeleted int
	}{{1, 1}, {2, 0}} {
		r := newRig(t, 4)
		r.opts.DeleteLimit = 0.1 // 0.4 of a provider: rounds down to 0
		r.restart()
		r.cleanCycle()
		r.src.set(func(s *source) {
			s.nodes = s.nodes[:4-tc.gone]
			for i := 4 - tc.gone; i < 4; i++ {
				s.gone[nodeUUID(i)] = true
			}
		})
		r.cycle() // first proof
		rep := r.cycle()
		if rep.Deleted != tc.wantDeleted || len(r.fake.ProviderUUIDs()) != 4-tc.wantDeleted {
			t.Fatalf("%d gone of 4 at limit 0.1: report %+v", tc.gone, rep)
		}
		if tc.wantDeleted == 0 && !errorsContain(rep.Errors, "over the limit of 1 per cycle") {
			t.Fatalf("refusal not reported: %v", rep.Errors)
		}
	}
}
