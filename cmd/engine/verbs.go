package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
)

// errCycleFailed: the cycle ran and reported its errors already.
var errCycleFailed = errors.New("cycle had errors")

func cmdOnce(ctx context.Context, path string, asJSON bool, nodes []string, out io.Writer, log *slog.Logger) error {
	w, err := setup(ctx, path, log)
	if errors.Is(err, engine.ErrStateInUse) {
		if cfg, cerr := loadConfig(path); cerr == nil {
			return besideDaemon(ctx, cfg, err)
		}
	}
	if err != nil {
		return err
	}
	defer w.close(ctx)
	if err := uncoordinated(w.cfg, false); err != nil {
		return err
	}
	setMemoryLimit(w.cfg, log)
	id := placement.NewGlobalRequestID() // joins Placement's log with this run's
	log.Info("cycle started", "global_request_id", id)
	ctx = placement.WithGlobalRequestID(ctx, id)
	var r engine.Report
	if len(nodes) > 0 {
		if r, err = onceOnly(ctx, w, nodes, log); err != nil {
			return err // an unknown node: nothing was written
		}
	} else {
		r = w.eng.Cycle(ctx)
	}
	if err := w.eng.State().Save(); err != nil {
		log.Warn("state cache not saved", "err", err)
	}
	return finishReport(out, r, asJSON, func() { printReport(out, r) })
}

// finishReport prints a cycle's report, as JSON or by text, and fails
// when the cycle had errors (once and plan exit 1 then).
func finishReport(out io.Writer, r engine.Report, asJSON bool, text func()) error {
	if asJSON {
		printJSON(out, r)
	} else {
		text()
	}
	if len(r.Errors) > 0 {
		return errCycleFailed
	}
	return nil
}

// printJSON writes v as indented JSON, the form of every --json.
func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printReport prints a cycle's counts and errors.
func printReport(out io.Writer, r engine.Report) {
	fmt.Fprintf(out, "nodes %d, instances %d: created %d, updated %d, unchanged %d, deleted %d, quarantined %d, failed %d; "+
		"%d conflicts, %d Placement requests, %d ms\n",
		r.Nodes, r.Instances, r.Created, r.Updated, r.Unchanged, r.Deleted, r.Quarantined, r.Failed,
		r.Conflicts, r.PlacementRequests, r.DurationMS)
	for _, e := range r.Errors {
		fmt.Fprintf(stderrOf(out), "error: %s\n", e)
	}
}

func writeDetail(w engine.Write) string {
	switch w.Op {
	case engine.OpInventory:
		b, _ := json.Marshal(w.Inventory)
		return string(b)
	case engine.OpTraits:
		return fmt.Sprint(w.Traits)
	case engine.OpAggregates:
		return fmt.Sprint(w.Aggregates)
	}
	return w.Name
}

// besideDaemon turns "the state file is in use" into what to do when the
// process holding it is this engine's daemon: ask it for a cycle.
func besideDaemon(ctx context.Context, cfg *config.Config, inUse error) error {
	var last json.RawMessage
	asked, addr, _ := fromDaemon(ctx, cfg, "report", &last, slog.New(slog.DiscardHandler))
	if !asked {
		return inUse
	}
	return fmt.Errorf("engine run holds this engine's state file, with its API at %s: ask it for a cycle now with "+
		"curl -X POST http://%s/api/v1/cycle (or kill -USR1 its PID), and read it at http://%s/api/v1/report", addr, addr, addr)
}
