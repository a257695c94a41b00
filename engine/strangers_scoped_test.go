package engine_test

import (
	"context"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// An engine scoped by shard, observing: a provider named as a node it
// does not list and no engine's is reported (unowned) once the source
// proves that node deleted, in this cycle and the next; another shard's
// node's provider (not proven deleted) is not; nothing is written.
func TestObserveScopedReportsProvenStrangers(t *testing.T) {
	r := newRig(t, 6)
	r.src.set(func(s *source) {
		for i := range s.nodes {
			s.nodes[i].Shard = map[bool]string{true: "a", false: "b"}[i < 4]
		}
	})
	r.pol.Scope = engine.Scope{Shards: []string{"a"}}
	r.restart()
	r.cleanCycle()
	const gone = "0dead000-0000-4000-8000-000000000001"
	for _, u := range []string{gone, nodeUUID(4)} { // as nova names them, no marker
		if err := r.fake.CreateProvider(u, u); err != nil {
			t.Fatal(err)
		}
	}
	r.src.set(func(s *source) {
		s.gone[gone] = true
		s.nodes = s.nodes[:4] // shard b's, as a listing of shard a has them: absent, not deleted
	})
	r.fake.ResetRequests()
	for cycle := range 2 {
		rep := r.eng.Observe(context.Background())
		reported := map[string]bool{}
		for _, o := range rep.Outcomes {
			if o.Kind == engine.KindKept && o.Reason == engine.ReasonUnowned {
				reported[o.Node] = true
			}
		}
		if !reported[gone] || reported[nodeUUID(4)] || len(reported) != 1 {
			t.Fatalf("cycle %d: reported %v, want only %s (proven deleted), not shard b's %s", cycle, reported, gone, nodeUUID(4))
		}
	}
	for _, req := range r.fake.Requests() {
		if req.Method != "GET" {
			t.Errorf("observe sent %s %s", req.Method, req.Path)
		}
	}
}
