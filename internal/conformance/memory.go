package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// minMemory is the smallest plugin.memory_limit the engine accepts.
const minMemory = 16 << 20

// checkMemory finds, by bisection, the least memory limit under which the
// plugin still configures and lists (the host does not expose a guest's
// high-water mark, and a Go guest's GC adapts to its limit, so the least
// limit that works is the figure an operator can use). It fails when
// that exceeds Headroom of plugin.memory_limit.
func checkMemory(ctx context.Context, s *suite) error {
	if s.nodes == nil {
		return skip("no listing to measure")
	}
	limit := s.o.Host.MemoryLimit
	step := max(uint64(4<<20), limit/64)
	lo, hi := uint64(minMemory), limit // lists within hi; lo is below the least known to work
	fits, err := s.listsWithin(ctx, lo)
	if err != nil {
		return err
	}
	if fits {
		hi = lo
	}
	for hi-lo > step {
		mid := (lo + hi) / 2 / pageSize * pageSize
		ok, err := s.listsWithin(ctx, mid)
		if err != nil {
			return err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	if float64(hi) > float64(limit)*Headroom {
		return fmt.Errorf("needs about %d MiB to list, over %.0f%% of plugin.memory_limit %d MiB",
			hi>>20, Headroom*100, limit>>20)
	}
	s.note = fmt.Sprintf("lists within %d MiB (least limit, ±%d MiB) of plugin.memory_limit %d MiB", hi>>20, step>>20, limit>>20)
	if n := s.quiet.Load(); n > 0 {
		s.note += fmt.Sprintf("; %d lines the plugin wrote while short of memory not shown", n)
	}
	return nil
}

const pageSize = 64 << 10

// counting is a slog handler that counts records and drops them.
type counting struct{ n *atomic.Int64 }

func (c counting) Enabled(context.Context, slog.Level) bool { return true }
func (c counting) Handle(context.Context, slog.Record) error {
	c.n.Add(1)
	return nil
}
func (c counting) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c counting) WithGroup(string) slog.Handler      { return c }

// listsWithin loads the plugin with memory limit m and lists once: false
// when it runs out of memory or time (or its minimum memory exceeds m),
// an error when it fails otherwise.
func (s *suite) listsWithin(ctx context.Context, m uint64) (bool, error) {
	o := s.o.Host
	o.MemoryLimit = m
	// Running out of memory is the point here: the guest's runtime trace
	// (tens of lines) is counted, not logged.
	o.Logger = slog.New(counting{&s.quiet})
	p, err := wasmhost.Load(ctx, s.o.Path, s.o.Config, o)
	if err == nil {
		defer p.Close(ctx)
		_, err = p.ListNodes(ctx, hostabi.ListNodesRequest{})
	}
	switch {
	case err == nil:
		return true, nil
	case wasmhost.IsKind(err, wasmhost.KindOutOfMemory), wasmhost.IsKind(err, wasmhost.KindRefused),
		wasmhost.IsKind(err, wasmhost.KindTimeout): // a GC thrashing at a small limit does not fit either
		return false, nil
	}
	return false, fmt.Errorf("with memory_limit %d MiB: %w", m>>20, err)
}
