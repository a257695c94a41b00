package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// Stand-down after a held node's deletion: its provider is reserved
// before its hold goes and then deleted, so the deleted node is never
// offered and nothing is left behind; a provider that cannot be deleted
// (an allocation) stays reserved and is named.
func TestRetireGoneLeavesNothingOffered(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cleanCycle()
	r.fake.Allocate("a1111111-0000-4000-8000-000000000001", nodeUUID(1), map[string]int64{goldRC: 1})
	windows := r.watchWindows(nodeUUID(0), nodeUUID(1))
	n, err := engine.RetireGone(context.Background(), r.pc, r.ownerT, []string{nodeUUID(0), nodeUUID(1), "99999999-0000-4000-8000-000000000000"})
	if n != 1 || len(*windows) > 0 {
		t.Fatalf("retired %d, windows %v", n, *windows)
	}
	if _, ok := r.fake.Provider(nodeUUID(0)); ok || r.held(nodeUUID(0)) {
		t.Errorf("the deleted node's provider or hold is left")
	}
	if err == nil || !strings.Contains(err.Error(), nodeUUID(1)) || r.reserved(nodeUUID(1)) != 1 {
		t.Errorf("a provider with an allocation: %v, reserved %d", err, r.reserved(nodeUUID(1)))
	}
}
