package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/redact"
)

// errCycleFailed: the cycle ran and reported its errors already.
var errCycleFailed = errors.New("cycle had errors")

func cmdOnce(ctx context.Context, path string, asJSON, dry bool, out io.Writer, log *slog.Logger) error {
	w, err := setup(ctx, path, log)
	if err != nil {
		return err
	}
	defer w.close(ctx)
	if err := uncoordinated(w.cfg, dry); err != nil {
		return err
	}
	id := placement.NewGlobalRequestID() // joins Placement's log with this run's
	log.Info("cycle started", "global_request_id", id)
	ctx = placement.WithGlobalRequestID(ctx, id)
	var r engine.Report
	if dry {
		r = w.eng.Plan(ctx)
	} else {
		r = w.eng.Cycle(ctx)
		if err := w.eng.State().Save(); err != nil {
			log.Warn("state cache not saved", "err", err)
		}
	}
	return finishReport(out, r, asJSON, func() { printReport(out, r, dry) })
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

func printReport(out io.Writer, r engine.Report, dry bool) {
	if dry {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "OP\tPROVIDER\tDETAIL")
		for _, w := range r.Writes {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", w.Op, w.UUID, writeDetail(w))
		}
		tw.Flush()
		fmt.Fprintf(out, "plan: %d writes (nothing written)\n", len(r.Writes))
	}
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

// cmdValidate checks, in order, the config, the identity and catalog,
// Placement, the plugin, the plugin's services and the status server's
// address; it stops at the first failure, which names the key or step.
func cmdValidate(ctx context.Context, path string, out io.Writer, log *slog.Logger) error {
	v := validation{out}
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	v.ok("config %s", path)
	for _, w := range cfg.Warnings() {
		v.note("%s", w)
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("auth (%s): %w", cfg.Auth.Method, err)
	}
	v.ok("%s", c.describeAuth())
	for _, r := range c.resolved(cfg) {
		v.ok("catalog: %s", r)
	}
	pc, err := c.connect(ctx, cfg, nil)
	if err != nil {
		return err
	}
	v.ok("placement %s at microversion %s", redact.URL(c.placement), pc.Microversion())
	if err := checkNova(ctx, pc, cfg, knownProviders(cfg, c), v); err != nil {
		return err
	}
	plugin, err := loadPlugin(ctx, cfg, c, log)
	if err != nil {
		return err
	}
	defer plugin.Close(ctx)
	defer c.close(ctx)
	info := plugin.Info()
	v.ok("plugin %q version %q loaded (ABI v%d, %s isolation, optional operations: %s)",
		info.Name, info.Version, info.ABIVersion, info.Isolation, operations(info))
	checkServices(info, cfg, v)
	if err := reachServices(ctx, c.pluginOptions(cfg, log), v); err != nil {
		return err
	}
	checkListen(cfg, v)
	return nil
}

func cmdShow(ctx context.Context, path string, asJSON bool, node string, out io.Writer, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	pc, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	ps, err := pc.ListProviders(ctx, url.Values{"required": {engine.OwnerTrait(cfg.Engine.ID)}})
	if err != nil {
		return err
	}
	type row struct {
		UUID       string                         `json:"uuid"`
		Generation string                         `json:"generation"`
		Inventory  map[string]placement.Inventory `json:"inventories"`
	}
	rows := make([]row, 0, len(ps))
	for _, p := range ps {
		if node != "" && !strings.EqualFold(p.UUID, node) {
			continue
		}
		_, inv, err := pc.Inventories(ctx, p.UUID)
		if err != nil {
			return err
		}
		rows = append(rows, row{p.UUID, string(p.Generation), inv})
	}
	if node != "" && len(rows) == 0 {
		return fmt.Errorf("node %q: this engine has no provider of that uuid", node)
	}
	if asJSON {
		return json.NewEncoder(out).Encode(rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tGENERATION\tCLASS\tTOTAL\tRESERVED")
	for _, r := range rows {
		for rc, inv := range r.Inventory {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", r.UUID, r.Generation, rc, inv.Total, inv.Reserved)
		}
	}
	tw.Flush()
	fmt.Fprintf(out, "%d providers owned by engine %q\n", len(rows), cfg.Engine.ID)
	return nil
}
