package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/sync/errgroup"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
)

// shown is one of this engine's providers as `engine show` prints it.
type shown struct {
	Name         string                         `json:"name"` // the node's, at the source ("" if unknown)
	UUID         string                         `json:"uuid"`
	ProviderName string                         `json:"provider_name"` // Placement's
	Generation   string                         `json:"generation"`
	Inventory    map[string]placement.Inventory `json:"inventories"`
	Traits       []string                       `json:"traits"`
	Aggregates   []string                       `json:"aggregates"`
}

// cmdShow lists this engine's providers as Placement holds them, with
// the node's name at the source (one listing of the plugin): uuid,
// generation, inventory (total, reserved, min, max, step, ratio), traits
// and aggregates, sorted by name then uuid. node (a uuid or a name)
// keeps one; an unknown one is an error.
func cmdShow(ctx context.Context, path string, p printer, node string, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer c.close(ctx)
	pc, err := c.connect(ctx, cfg, nil)
	if err != nil {
		return err
	}
	ps, err := pc.ListProviders(ctx, url.Values{"required": {ownerTrait(cfg)}})
	if err != nil {
		return err
	}
	names, err := nodeNames(ctx, cfg, c, log)
	if err != nil {
		log.Warn("node names left out: the plugin did not list the nodes", "err", err)
	}
	rows := make([]shown, 0, len(ps))
	for _, pr := range ps {
		name := names[strings.ToLower(pr.UUID)]
		if node == "" || strings.EqualFold(pr.UUID, node) || name == node || pr.Name == node {
			rows = append(rows, shown{Name: name, UUID: pr.UUID, ProviderName: pr.Name, Generation: string(pr.Generation)})
		}
	}
	if node != "" && len(rows) == 0 {
		return fmt.Errorf("node %q: this engine has no provider of that uuid or name", node)
	}
	if err := readShown(ctx, pc, rows, cfg.Engine.Concurrency); err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b shown) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.UUID, b.UUID)) })
	return p.print(rows, func() { printShown(p.w, rows, cfg.Engine.ID) })
}

// nodeNames maps the uuid of each node the plugin lists in this
// engine's scope to its name: providers are named by uuid, operators
// know nodes by name.
func nodeNames(ctx context.Context, cfg *config.Config, c *cloud, log *slog.Logger) (map[string]string, error) {
	plugin, err := loadPlugin(ctx, cfg, c, log)
	if err != nil {
		return nil, err
	}
	defer plugin.Close(ctx)
	scope := engine.Scope{Shards: cfg.Scope.Shards, ConductorGroups: cfg.Scope.ConductorGroups}
	nodes, err := plugin.ListNodes(ctx, scope.Request())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		if n.Name != "" {
			out[strings.ToLower(n.UUID)] = n.Name
		}
	}
	return out, nil
}

// readShown reads each provider's inventory, traits and aggregates, a
// few providers at a time (engine.concurrency).
func readShown(ctx context.Context, pc *placement.Client, rows []shown, workers int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	for i := range rows {
		r := &rows[i]
		g.Go(func() error {
			var err error
			if _, r.Inventory, err = pc.Inventories(ctx, r.UUID); err != nil {
				return fmt.Errorf("provider %s: %w", r.UUID, err)
			}
			if _, r.Traits, err = pc.Traits(ctx, r.UUID); err != nil {
				return fmt.Errorf("provider %s: %w", r.UUID, err)
			}
			if _, r.Aggregates, err = pc.Aggregates(ctx, r.UUID); err != nil {
				return fmt.Errorf("provider %s: %w", r.UUID, err)
			}
			slices.Sort(r.Traits)
			slices.Sort(r.Aggregates)
			return nil
		})
	}
	return g.Wait()
}

// printShown prints one line per provider and class; the traits and the
// aggregates are on each line, so a line says all of its provider.
func printShown(out io.Writer, rows []shown, id string) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROVIDER\tGEN\tCLASS\tTOTAL\tRESERVED\tMIN\tMAX\tSTEP\tRATIO\tTRAITS\tAGGREGATES")
	for _, r := range rows {
		traits, aggs := orDash(strings.Join(r.Traits, ",")), orDash(strings.Join(r.Aggregates, ","))
		classes := slices.Sorted(maps.Keys(r.Inventory))
		if len(classes) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\t%s\n", orDash(r.Name), r.UUID, r.Generation, traits, aggs)
		}
		for _, rc := range classes {
			inv := r.Inventory[rc]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", orDash(r.Name), r.UUID, r.Generation, rc,
				inv.Total, inv.Reserved, inv.MinUnit, inv.MaxUnit, inv.StepSize, strconv.FormatFloat(inv.AllocationRatio, 'g', -1, 64), traits, aggs)
		}
	}
	tw.Flush()
	fmt.Fprintf(out, "%d providers owned by engine %q\n", len(rows), id)
}
