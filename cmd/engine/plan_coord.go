package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
)

// planShared makes a plan under [coord] see what the engine's daemon
// works from: the units its claims hold now and the fleet's shared
// ownership record, both read from etcd without registering, holding a
// lease or writing (coord.Reader), for eng, an engine of w. done closes
// the connection after the plan.
func planShared(ctx context.Context, w *assembly, eng *engine.Engine, log *slog.Logger) (done func(), err error) {
	cfg := w.cfg
	if cfg.Coord.Backend != config.BackendKubernetes {
		if err := etcdAccepts(ctx, cfg); err != nil {
			return nil, err
		}
	}
	r, err := openReader(cfg)
	if err != nil {
		return nil, fmt.Errorf("coord: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sharedScope(rctx, w, eng, r, log); err != nil {
		r.Close()
		return nil, err
	}
	recorded, err := r.RecordedPlacement(rctx)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("coord: %w", err)
	}
	// The record is this Placement's only while it has the identity
	// trait; a daemon would start another record otherwise (coord_record.go).
	if recorded != "" {
		have, err := w.pc.TraitsStartingWith(rctx, recorded)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("placement: %w", err)
		}
		if len(have) > 0 && have[0] == recorded {
			eng.ShareRecord(r.Store(recorded), true)
		}
	}
	return r.Close, nil
}

// sharedScope narrows the plan to the units this engine holds, as
// BeforeCycle narrows a cycle; a static division plans its [scope].
func sharedScope(ctx context.Context, w *assembly, eng *engine.Engine, r sharedReader, log *slog.Logger) error {
	div := division(w.cfg)
	if !div.Dynamic() {
		return nil
	}
	held, err := r.Held(ctx, w.cfg.Engine.ID)
	if err != nil {
		return fmt.Errorf("coord: %w", err)
	}
	if len(held) == 0 {
		log.Warn("this engine holds no unit now (is its daemon running?): the plan covers all of [scope]")
		return nil
	}
	scope := policy(w.cfg).Scope
	if div.Partitions > 0 {
		scope.Partitions, scope.Held = div.Partitions, coord.Partitions(held)
	} else {
		scope.Shards = coord.Shards(held)
	}
	eng.SetScope(scope, nil)
	return nil
}
