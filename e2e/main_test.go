package e2e

import (
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

func TestMain(m *testing.M) { placementtest.Main(m) }
