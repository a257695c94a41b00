package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// quickRetries rebuilds the rig's client with short backoff: these tests
// count requests, not time.
func (r *rig) quickRetries() {
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: r.fake.URL(), Token: "admin",
		Retry: placement.Retry{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.pc = pc
	r.eng = engine.New(r.src, pc, r.pol, r.opts, r.state, nil)
}

func TestTransient5xxIsHealedWithinTheCycle(t *testing.T) {
	r := newRig(t, 3)
	r.quickRetries()
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[0].Maintenance = true })
	in := r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Status: 502, Times: 2})
	rep := r.cleanCycle()
	if in.Fired() != 2 || rep.Updated != 1 || r.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("fired %d, report %+v, reserved %d", in.Fired(), rep, r.reserved(nodeUUID(0)))
	}
}

// A write that keeps failing must not throw away what the cycle learned:
// the generation after the writes that did succeed is kept, so the next
// cycle sends the one missing write, not three reads and the write.
func TestFailedWriteKeepsTheGenerationItLearned(t *testing.T) {
	r := newRig(t, 3)
	r.quickRetries()
	r.cleanCycle()
	u := nodeUUID(0)
	r.src.set(func(s *source) {
		s.nodes[0].Traits = []string{"CUSTOM_GPU"}
		s.nodes[0].Maintenance = true
	})
	in := r.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Status: 502})
	rep := r.cycle()
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "502 Bad Gateway") || !strings.Contains(rep.Errors[0].Message, "[request req-") {
		t.Fatalf("errors %q: want the 502 with its title and request id", rep.Errors)
	}
	in.Remove()
	mark := len(r.fake.Requests())
	r.cleanCycle()
	var sent []string
	for _, req := range r.fake.Requests()[mark:] {
		if strings.Contains(req.Path, u) {
			sent = append(sent, req.Method+" "+req.Path[strings.LastIndex(req.Path, "/")+1:])
		}
	}
	if len(sent) != 1 || sent[0] != "PUT inventories" {
		t.Fatalf("after the failed write the provider cost %q; want only the missing PUT inventories", sent)
	}
	if r.reserved(u) != 1 || !slices.Contains(r.provider(u).Traits, "CUSTOM_GPU") {
		t.Fatalf("not converged: %+v", r.provider(u))
	}
}
