package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// coordSetup runs each cycle of a daemon setup under the coordinator:
// BeforeCycle first, then the cycle under the fenced context.
type coordSetup struct {
	*daemonSetup
	co *coordinator
	// mu orders BeforeCycle (which sets the engine's scope) and the node
	// syncs; cycling says a cycle runs under the scope it set.
	mu      sync.Mutex
	cycling bool
}

// wrap puts w's cycles under co; without [coord] (co nil) w is returned.
func (co *coordinator) wrap(w daemon.Setup) daemon.Setup {
	if dw, ok := w.(*daemonSetup); ok && co != nil {
		return &coordSetup{daemonSetup: dw, co: co}
	}
	return w
}

// unwrap undoes wrap, for loadSetup, which reuses the previous setup's
// provider cache.
func unwrap(w daemon.Setup) daemon.Setup {
	if cw, ok := w.(*coordSetup); ok {
		return cw.daemonSetup
	}
	return w
}

func (w *coordSetup) Cycle(ctx context.Context) engine.Report {
	if err := w.co.sameMembership(w.daemonSetup); err != nil {
		return coordFailed(err)
	}
	w.mu.Lock()
	cctx, cancel, err := w.co.BeforeCycle(ctx, w.eng, w.pc)
	w.cycling = err == nil
	w.mu.Unlock()
	switch {
	case errors.Is(err, errNothingHeld):
		return engine.Report{Schema: engine.ReportSchema, Errors: []engine.Error{}}
	case err != nil:
		return coordFailed(err)
	}
	defer func() { w.mu.Lock(); w.cycling = false; w.mu.Unlock() }()
	defer cancel()
	return w.daemonSetup.Cycle(cctx)
}

// coordFailed is the report of a cycle the coordination stopped.
func coordFailed(err error) engine.Report {
	return engine.Report{Schema: engine.ReportSchema,
		Errors: []engine.Error{{Kind: engine.ErrCoordination, Message: err.Error()}}}
}

// sameMembership refuses a reloaded config that changes what this engine
// registered as: its id (its owner marker), its static scope, or [coord].
// Claims were made for the config at start; acting on another would write
// nodes nobody checked this engine may hold.
func (co *coordinator) sameMembership(w *daemonSetup) error {
	a, b := co.cfg, w.cfg
	if a.Engine.ID != b.Engine.ID || !reflect.DeepEqual(a.Scope, b.Scope) || !reflect.DeepEqual(a.Coord, b.Coord) {
		return fmt.Errorf("coord: the reloaded config changes engine.id, [scope] or [coord]; " +
			"that takes a restart: no writes until then")
	}
	return nil
}
