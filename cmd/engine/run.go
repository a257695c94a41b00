package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

func cmdRun(ctx context.Context, path string, log *slog.Logger) error {
	w, err := setup(ctx, path, log)
	if err != nil {
		return err
	}
	defer w.close(context.Background())
	interval := w.cfg.Engine.Interval.D()
	for {
		r := w.eng.Cycle(ctx, false)
		if err := w.eng.State().Save(); err != nil {
			log.Warn("state cache not saved", "err", err)
		}
		log.Info("cycle", "nodes", r.Nodes, "created", r.Created, "updated", r.Updated,
			"unchanged", r.Unchanged, "errors", len(r.Errors), "conflicts", r.Conflicts,
			"placement_requests", r.PlacementRequests, "duration_ms", r.DurationMS)
		for _, e := range r.Errors {
			log.Error("cycle error", "err", e)
		}
		// Jitter keeps engines that started together from hitting
		// Placement in step.
		wait := interval + time.Duration(rand.Int64N(int64(interval)/10+1))
		select {
		case <-ctx.Done():
			log.Info("stopping", "reason", ctx.Err())
			return nil
		case <-time.After(wait):
		}
	}
}
