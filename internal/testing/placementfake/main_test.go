package placementfake_test

import (
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// TestMain stops the shared real Placement used by TestSameAnswersAsReal.
func TestMain(m *testing.M) { placementtest.Main(m) }
