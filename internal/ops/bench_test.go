package ops_test

import (
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// The per-request cost the daemon adds to every Placement request.
func BenchmarkObservePlacement(b *testing.B) {
	m := ops.NewMetrics()
	for b.Loop() {
		m.ObservePlacement("PUT", 200, 3*time.Millisecond)
	}
}

// The per-event cost of the status page's observer, for a provider
// write (noted; rows are capped, so the buffer stays small).
func BenchmarkObserveProviderWritten(b *testing.B) {
	o := ops.New(nil)
	ev := engine.ProviderWritten{Node: "00000000-0000-4000-8000-000000000001",
		Op: engine.OpInventory, GenerationBefore: "1", GenerationAfter: "2"}
	for b.Loop() {
		o.Observe(ev)
	}
}
