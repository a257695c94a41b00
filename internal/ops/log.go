package ops

import (
	"context"
	"log/slog"
)

// Leveled filters records below level and passes the rest to next,
// whatever next's own level: it lowers a handler built for Info to Debug
// (log.level = "debug" adds one line per Placement request) and raises it
// too. level is a LevelVar so a reload can change it.
func Leveled(next slog.Handler, level *slog.LevelVar) slog.Handler {
	return leveled{next: next, level: level}
}

type leveled struct {
	next  slog.Handler
	level *slog.LevelVar
}

func (l leveled) Enabled(_ context.Context, lv slog.Level) bool { return lv >= l.level.Level() }

// Handle skips next.Enabled on purpose: the built-in handlers do not
// check the level again in Handle.
func (l leveled) Handle(ctx context.Context, r slog.Record) error { return l.next.Handle(ctx, r) }

func (l leveled) WithAttrs(as []slog.Attr) slog.Handler {
	return leveled{next: l.next.WithAttrs(as), level: l.level}
}

func (l leveled) WithGroup(name string) slog.Handler {
	return leveled{next: l.next.WithGroup(name), level: l.level}
}

// ParseLevel reads log.level ("debug", "info", "warn", "error").
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}
