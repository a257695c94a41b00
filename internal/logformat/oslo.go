package logformat

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Oslo is a slog.Handler that writes oslo.log's default line format:
//
//	2026-12-04 23:00:44.123 4242 INFO rpengine [req-<id> engine <id>] message key=value ...
//
// (oslo's logging_context_format_string: time with milliseconds, pid,
// level, logger name, the request context in brackets, the message.) The
// context names the Placement request_id and the engine id when a record
// carries them, "-" for either when not. A line break inside the message
// or a value is followed by four spaces, so every record starts exactly
// one line that kolla's fluentd first-line pattern matches.
type Oslo struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	name  string
	pid   int
	attrs []slog.Attr // from WithAttrs, groups already applied
	group string      // prefix of later attributes' keys
}

// NewOslo writes records at level or above to w under logger name name.
func NewOslo(w io.Writer, level slog.Leveler, name string) *Oslo {
	if level == nil {
		level = slog.LevelInfo
	}
	return &Oslo{mu: &sync.Mutex{}, w: w, level: level, name: name, pid: os.Getpid()}
}

// Enabled reports whether a record at l is written.
func (h *Oslo) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// WithAttrs returns a handler that adds as to every record.
func (h *Oslo) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = append(c.attrs, prefixed(h.group, a))
	}
	return &c
}

// WithGroup returns a handler whose later attributes' keys start with name.
func (h *Oslo) WithGroup(name string) slog.Handler {
	c := *h
	c.group = h.group + name + "."
	return &c
}

// Handle writes one record as one oslo line (and its indented
// continuation lines).
func (h *Oslo) Handle(_ context.Context, r slog.Record) error {
	attrs := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, prefixed(h.group, a))
		return true
	})
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	fmt.Fprintf(&b, "%s %d %s %s [%s] %s", t.Format("2006-01-02 15:04:05.000"), h.pid, levelName(r.Level), h.name,
		requestContext(attrs), r.Message)
	for _, a := range attrs {
		if a.Key == "request_id" || a.Key == "engine" {
			continue
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, quote(a.Value.String()))
	}
	line := strings.ReplaceAll(b.String(), "\n", "\n    ") + "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// requestContext is oslo's bracketed request context: request and engine.
func requestContext(attrs []slog.Attr) string {
	req, engine := "-", "-"
	for _, a := range attrs {
		switch v := a.Value.String(); {
		case a.Key == "request_id" && v != "":
			req = v
		case a.Key == "engine" && v != "":
			engine = v
		}
	}
	if req != "-" && !strings.HasPrefix(req, "req-") {
		req = "req-" + req
	}
	return req + " engine " + strings.Join(strings.Fields(engine), "_")
}

func prefixed(group string, a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if group != "" {
		a.Key = group + a.Key
	}
	return a
}

// levelName is oslo's name of l: DEBUG, INFO, WARNING, ERROR.
func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

// quote quotes a value that holds a space, a quote or nothing, as slog's
// text handler does.
func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
