package wasmhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// recorder is a slog handler that keeps "LEVEL msg k=v" lines.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) logger() *slog.Logger { return slog.New(r) }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, line)
	return nil
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}
