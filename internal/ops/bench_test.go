package ops_test

import (
	"fmt"
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

// The status page's cost of an idle cycle at 10,000 nodes: one outcome
// event per node, then the table swap.
func BenchmarkObserveIdleCycle10k(b *testing.B) {
	o := ops.New(nil)
	evs := make([]engine.Event, 10000)
	for i := range evs {
		evs[i] = engine.ProviderOutcome{Outcome: engine.Outcome{Node: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			Kind: engine.KindUnchanged}}
	}
	for b.Loop() {
		o.Observe(engine.CycleStarted{})
		for _, e := range evs {
			o.Observe(e)
		}
		o.CycleDone(engine.Report{Unchanged: len(evs)}, time.Time{})
	}
}
