package ops_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/ops"
)

// On the journal's stream each line leads with its priority, as
// sd-daemon(3) says; attributes and groups carry over; the level filter
// of the handler below still applies.
func TestJournalHandlerPrefixesPriority(t *testing.T) {
	var b bytes.Buffer
	h := ops.JournalHandler(&b, func(w io.Writer) slog.Handler {
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	})
	log := slog.New(h).With("engine", "e1")
	log.Debug("d")
	log.Info("i")
	log.Warn("w")
	log.Error("e", "n", 1)
	log.WithGroup("g").Log(context.Background(), slog.LevelError+4, "worse")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{`<7>{"time"`, `<6>{"time"`, `<4>{"time"`, `<3>{"time"`, `<3>{"time"`}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) || !strings.Contains(l, `"engine":"e1"`) {
			t.Errorf("line %d: %s; want prefix %s and the engine", i, l, want[i])
		}
	}
	if !strings.Contains(lines[3], `"n":1`) {
		t.Errorf("attrs lost: %s", lines[3])
	}
	var text bytes.Buffer
	slog.New(ops.JournalHandler(&text, func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) })).Debug("hidden")
	if text.Len() != 0 {
		t.Errorf("a debug record passed an info handler: %q", text.String())
	}
}
