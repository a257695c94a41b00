package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/conformance"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

const pluginTestUsage = "engine plugin test [-o json|table] [--config FILE] FILE.wasm"

// errChecksFailed: the conformance suite ran and printed its failures.
var errChecksFailed = errors.New("conformance checks failed")

// pluginTestOptions are the suite's options for file: with cfgPath, that
// engine config's [plugin] table.
func pluginTestOptions(ctx context.Context, file, cfgPath string, log *slog.Logger) (conformance.Options, error) {
	o := conformance.Options{Path: file, Host: wasmhost.Options{CacheDir: pluginCacheDir(), Logger: log}}
	if cfgPath == "" {
		return o, nil
	}
	// The kit never calls Placement: the config need not name one.
	cfg, err := config.LoadPlugin(cfgPath)
	if err != nil {
		return o, configError{err}
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return o, fmt.Errorf("auth (%s): %w", cfg.Auth.Method, err)
	}
	if o.Config, err = cfg.PluginConfig(); err != nil {
		return o, fmt.Errorf("plugin.config: %w", err)
	}
	o.Host = c.pluginOptions(cfg, log)
	o.Host.SHA256 = "" // plugin.sha256 pins plugin.path, not the file under test
	return o, nil
}

// cmdPluginTest runs the conformance suite against a plugin: with
// --config, the [plugin] table of that engine config (limits, services,
// config) applies, with FILE.wasm in place of plugin.path.
func cmdPluginTest(ctx context.Context, args []string, asJSON bool, out io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("plugin test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&asJSON, "json", asJSON, "print one JSON object per check")
	outputFlag(fs, &asJSON)
	cfgPath := fs.String("config", "", "engine config whose [plugin] table applies")
	// Flags may come before or after the file, as in the usage line of
	// the README (engine plugin test FILE.wasm --config FILE).
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("%w: %v; %s", errUsage, err, pluginTestUsage)
		}
		if fs.NArg() == 0 {
			break
		}
		files, args = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: %s", errUsage, pluginTestUsage)
	}
	o, err := pluginTestOptions(ctx, files[0], *cfgPath, log)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	failed, total := 0, 0
	ok := conformance.Run(ctx, o, func(r conformance.Result) {
		total++
		if r.Status == conformance.Fail {
			failed++
		}
		if asJSON {
			enc.Encode(r)
			return
		}
		fmt.Fprintf(out, "%-4s  %-15s %7s  %s\n", r.Status, r.Check, r.Took.Round(time.Millisecond), r.Detail)
	})
	if !ok {
		if !asJSON {
			fmt.Fprintf(out, "FAIL  %s: %d of %d checks failed\n", o.Path, failed, total)
		}
		return errChecksFailed
	}
	if !asJSON {
		fmt.Fprintf(out, "ok    %s\n", o.Path)
	}
	return nil
}
