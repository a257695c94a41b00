package ops_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/ops"
)

// The per-request cost the daemon adds to every Placement request.
func BenchmarkObservePlacement(b *testing.B) {
	m := ops.NewMetrics()
	for b.Loop() {
		m.ObservePlacement("PUT", 200, 3*time.Millisecond)
	}
}

// The per-record cost of the status page's tap on the engine's logs, for
// a provider write (noted; rows are capped, so the buffer stays small)
// behind a handler that drops Info.
func BenchmarkTapProviderWritten(b *testing.B) {
	o := ops.New(nil)
	log := slog.New(o.Tap(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := context.Background()
	for b.Loop() {
		log.InfoContext(ctx, "provider written", "node", "00000000-0000-4000-8000-000000000001",
			"op", "set_inventories", "generation_before", "1", "generation_after", "2")
	}
}
