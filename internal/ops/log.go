package ops

import (
	"context"
	"io"
	"log/slog"
	"sync"
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

// JournalHandler is the handler newHandler builds on w, each line led by
// its record's priority as journald reads it on its stream transport
// (sd-daemon(3)): <3> error, <4> warning, <6> info, <7> debug. Use it when
// stderr is the journal's stream (JOURNAL_STREAM): `journalctl -p warning`
// then finds the engine's warnings. One handler per priority, all
// writing through one lock, so each record stays one write.
func JournalHandler(w io.Writer, newHandler func(io.Writer) slog.Handler) slog.Handler {
	lw := &lockedWriter{w: w}
	var j journal
	for i, p := range journalPrefixes {
		j[i] = newHandler(prefixWriter{lw, p})
	}
	return j
}

// journalPrefixes are the sd-daemon prefixes of debug, info, warn and error.
var journalPrefixes = [4]string{"<7>", "<6>", "<4>", "<3>"}

type journal [4]slog.Handler

func (j journal) pick(l slog.Level) slog.Handler {
	switch {
	case l >= slog.LevelError:
		return j[3]
	case l >= slog.LevelWarn:
		return j[2]
	case l >= slog.LevelInfo:
		return j[1]
	}
	return j[0]
}

func (j journal) Enabled(ctx context.Context, l slog.Level) bool { return j.pick(l).Enabled(ctx, l) }

func (j journal) Handle(ctx context.Context, r slog.Record) error {
	return j.pick(r.Level).Handle(ctx, r)
}

func (j journal) WithAttrs(as []slog.Attr) slog.Handler {
	var out journal
	for i, h := range j {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (j journal) WithGroup(name string) slog.Handler {
	var out journal
	for i, h := range j {
		out[i] = h.WithGroup(name)
	}
	return out
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// prefixWriter writes prefix and p in one write: a record is one line.
type prefixWriter struct {
	w      *lockedWriter
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	line := make([]byte, 0, len(p.prefix)+len(b))
	line = append(append(line, p.prefix...), b...)
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	if _, err := p.w.w.Write(line); err != nil {
		return 0, err
	}
	return len(b), nil
}
