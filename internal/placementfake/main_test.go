package placementfake_test

import (
	"testing"

	"github.com/rpengine/rpengine/internal/placementtest"
)

// TestMain stops the shared real Placement used by TestSameAnswersAsReal.
func TestMain(m *testing.M) { placementtest.Main(m) }
