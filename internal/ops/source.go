package ops

import (
	"context"
	"errors"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// Around runs one call into a source: it may time it, or give it another
// context, and must return call's error.
type Around func(ctx context.Context, name string, call func(context.Context) error) error

// WrapSource decorates every call into src with around. The wrapper keeps
// src's optional capabilities as they are: it proves deletion only if src
// can. Call names: list_nodes, list_instances, confirm_deleted.
func WrapSource(src engine.Source, around Around) engine.Source {
	return &wrapped{src: src, around: around}
}

// TimedSource times every call into the plugin by outcome.
func TimedSource(src engine.Source, m *Metrics) engine.Source {
	return WrapSource(src, func(ctx context.Context, name string, call func(context.Context) error) error {
		start := time.Now()
		err := call(ctx)
		m.ObservePlugin(name, callOutcome(ctx, err), time.Since(start))
		if ctx.Err() == nil { // a call the engine gave up proves nothing
			m.deps.observe("plugin", err, time.Now())
		}
		return err
	})
}

// StoppableSource ends plugin calls when stop closes. Cancelling a listing
// is always safe — the cycle then writes nothing — while the Placement
// writes of the same cycle run on, so a SIGTERM does not wait for a slow
// listing nor cut a write.
func StoppableSource(src engine.Source, stop <-chan struct{}) engine.Source {
	return WrapSource(src, func(ctx context.Context, _ string, call func(context.Context) error) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		return call(ctx)
	})
}

type wrapped struct {
	src    engine.Source
	around Around
}

func (w *wrapped) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) (nodes []hostabi.Node, err error) {
	err = w.around(ctx, "list_nodes", func(ctx context.Context) error {
		nodes, err = w.src.ListNodes(ctx, req)
		return err
	})
	return nodes, err
}

func (w *wrapped) ListInstances(ctx context.Context) (is []hostabi.Instance, err error) {
	err = w.around(ctx, "list_instances", func(ctx context.Context) error {
		is, err = w.src.ListInstances(ctx)
		return err
	})
	return is, err
}

// ConfirmDeleted forwards to the source; Supports tells the engine
// whether that means anything.
func (w *wrapped) ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error) {
	c, ok := engine.ProvesDeletion(w.src)
	if !ok {
		return nil, nil, errors.New("the plugin cannot prove deletion")
	}
	err = w.around(ctx, "confirm_deleted", func(ctx context.Context) error {
		deleted, present, err = c.ConfirmDeleted(ctx, uuids)
		return err
	})
	return deleted, present, err
}

// Supports answers as the source would (engine.ProvesDeletion for
// confirm_deleted); a source without Supports supports no other export.
func (w *wrapped) Supports(export string) bool {
	if export == hostabi.ExportConfirmDeleted {
		_, ok := engine.ProvesDeletion(w.src)
		return ok
	}
	s, ok := w.src.(engine.Supporter)
	return ok && s.Supports(export)
}

// callOutcome tells a plugin failure from a call that ran out of time
// (plugin.timeout) and from one the engine gave up on (stopping).
func callOutcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "ok"
	case ctx.Err() != nil:
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}
