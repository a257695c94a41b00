package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rpengine/rpengine/engine"
)

// reownUsage is `engine reown`'s synopsis.
const reownUsage = "--config FILE [--json] [--max N] [--yes | VALUE|NODE:VALUE ...]"

// defaultReownMax bounds one reown's removals: a plan of more is more
// likely a wrong config (a marker trait left out) than lost records.
const defaultReownMax = 100

// reownResult is what `engine reown --json` prints.
type reownResult struct {
	Strays   []engine.Stray `json:"strays"`
	Selected []engine.Stray `json:"selected"`
	Removed  int            `json:"removed"`
}

// cmdReown lists the strays on this engine's providers (nothing explains
// them: neither the source nor any ownership record) and removes those
// the operator names, or all of them with --yes, within --max.
func cmdReown(ctx context.Context, argv []string, out io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("engine reown", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config := fs.String("config", "", "the config file (TOML); required")
	asJSON := fs.Bool("json", false, "print JSON")
	yes := fs.Bool("yes", false, "remove every stray listed")
	limit := fs.Int("max", defaultReownMax, "remove nothing if more than this many are selected")
	if err := fs.Parse(argv); err != nil {
		return fmt.Errorf("%w: %v (usage: engine reown %s)", errUsage, err, reownUsage)
	}
	names := fs.Args()
	if *config == "" || *yes && len(names) > 0 || *limit < 1 {
		return fmt.Errorf("%w: engine reown %s (--yes or names, not both)", errUsage, reownUsage)
	}
	w, err := setup(ctx, *config, log)
	if err != nil {
		return err
	}
	defer w.close(ctx)
	ctx, release, err := reownCoordinated(ctx, w, log)
	if err != nil {
		return err
	}
	defer release()
	strays, err := w.eng.Strays(ctx)
	if err != nil {
		return err
	}
	res := reownResult{Strays: strays}
	if res.Selected, err = pickStrays(strays, names, *yes); err != nil {
		return err
	}
	if len(res.Selected) > *limit {
		return fmt.Errorf("%d strays selected, over --max %d: nothing removed; name fewer, or raise --max", len(res.Selected), *limit)
	}
	if len(res.Selected) > 0 {
		res.Removed, err = w.eng.Reown(ctx, res.Selected)
		if serr := w.eng.State().Save(); serr != nil {
			log.Warn("state not saved", "err", serr)
		}
	}
	if *asJSON {
		printJSON(out, res)
	} else {
		printStrays(out, res)
	}
	return err
}

// pickStrays selects from strays: all with yes; else those each name
// matches, a VALUE on every node or a NODE:VALUE (node uuid or name) on
// one. A name that matches nothing is an error: a typo removes nothing.
func pickStrays(strays []engine.Stray, names []string, yes bool) ([]engine.Stray, error) {
	if yes {
		return strays, nil
	}
	var out []engine.Stray
	for _, n := range names {
		node, value, scoped := strings.Cut(n, ":")
		if !scoped {
			value = n
		}
		hit := false
		for _, s := range strays {
			if s.Value == value && (!scoped || strings.EqualFold(s.Node, node) || s.Name == node) {
				hit = true
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		if !hit {
			return nil, fmt.Errorf("%w: %q is not among the strays listed: nothing removed", errUsage, n)
		}
	}
	return out, nil
}

func printStrays(out io.Writer, res reownResult) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tNAME\tKIND\tVALUE\tACTION")
	for _, s := range res.Strays {
		action := "kept"
		if slices.Contains(res.Selected, s) {
			action = "removed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Node, s.Name, s.Kind, s.Value, action)
	}
	tw.Flush()
	switch {
	case len(res.Selected) == 0:
		fmt.Fprintf(out, "%d strays: nothing explains them; nothing removed (name them, or --yes for all)\n", len(res.Strays))
	default:
		fmt.Fprintf(out, "%d strays, %d removed and recorded as this engine's\n", len(res.Strays), res.Removed)
	}
}

// reownCoordinated, with [coord] etcd, joins the fleet as this engine
// (whose daemon must be stopped: one id, one member), so that reown acts
// only on the units it holds, under their lease, and reads and writes the
// shared record. Without [coord] it does nothing.
func reownCoordinated(ctx context.Context, w *assembly, log *slog.Logger) (context.Context, func(), error) {
	co, err := startCoordinator(ctx, w.cfg, log)
	if err != nil || co == nil {
		return ctx, func() {}, err
	}
	cctx, cancel, err := co.BeforeCycle(ctx, w.eng, w.pc)
	if errors.Is(err, errNothingHeld) {
		err = fmt.Errorf("coord: this engine holds no unit of the fleet now (its peers hold them all): nothing to reown")
	}
	if err != nil {
		co.Close()
		return ctx, func() {}, err
	}
	return cctx, func() { cancel(); co.Close() }, nil
}
