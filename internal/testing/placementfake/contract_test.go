package placementfake_test

import (
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// TestContract runs the suite that also runs against the real Placement
// (internal/testing/placementtest), which is what makes this fake trustworthy.
func TestContract(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		s := placementfake.New(placementfake.WithSeed(seed))
		t.Cleanup(s.Close)
		placementtest.RunContract(t, s.URL())
		if unknown := s.SentUnknownGenerations(); len(unknown) != 0 {
			t.Errorf("seed %d: the contract suite sent generations the server never returned: %v", seed, unknown)
		}
	}
}
