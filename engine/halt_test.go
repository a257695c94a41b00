package engine_test

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// A cold start whose Placement stops answering ends early, with one error
// naming the cause, after a bounded number of failed requests: not one
// failure per provider.
func TestACycleWithoutProgressEndsEarlyNamingTheCause(t *testing.T) {
	r := newRig(t, 400)
	r.fake.Inject(placementfake.Fault{Method: "POST", Path: "/resource_providers", Drop: true})
	r.fake.Inject(placementfake.Fault{Path: "/resource_providers/*", Drop: true})
	r.fake.ResetRequests()
	rep := r.cycle()
	var halt []engine.Error
	for _, e := range rep.Errors {
		if strings.Contains(e.Message, "placement failing") {
			halt = append(halt, e)
		}
	}
	if len(halt) != 1 || halt[0].Kind != engine.ErrPlacement || !strings.Contains(halt[0].Message, "requests in a row failed") ||
		!strings.Contains(halt[0].Message, "providers not synced this cycle") {
		t.Fatalf("errors: %v", rep.Errors)
	}
	if n := len(r.fake.Requests()); n > 200 {
		t.Fatalf("%d requests sent to a Placement that answers none", n)
	}
	if len(rep.Errors) > 60 {
		t.Fatalf("%d errors", len(rep.Errors))
	}
	t.Logf("%d requests, %d errors: %s", len(r.fake.Requests()), len(rep.Errors), halt[0].Message)
	r.fake.ClearFaults()
	r.cleanCycle()
}
