package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// cmdPluginCompile compiles plugins into the compilation cache the engine
// reads at start, so that the first start after an install or an upgrade
// loads compiled code instead of compiling (seconds for a large plugin).
// A package runs it after installing the plugins, as the daemon's user:
//
//	engine plugin compile --config /etc/rpengine/rpengine.toml
//	engine plugin compile --cache-dir /var/cache/rpengine/wazero /usr/lib/rpengine/*.wasm
func cmdPluginCompile(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	const usage = "engine plugin compile [--config FILE] [--cache-dir DIR] [FILE.wasm ...]"
	fs := flag.NewFlagSet("plugin compile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", "", "the engine's config: its plugin and cache_dir")
	cacheDir := fs.String("cache-dir", "", "the compilation cache (default: the config's cache_dir, else the user's cache)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v: %s", errUsage, err, usage)
	}
	files := fs.Args()
	dir := *cacheDir
	if *cfgPath != "" {
		// Only plugin.path and plugin.cache_dir are read: a config whose
		// credentials are not in place yet (as the package installs it)
		// still names the plugin and the cache (validate checks the rest).
		cfg, errs := config.Check(*cfgPath)
		switch {
		case cfg == nil: // unreadable, or not TOML
			return configError{errors.Join(errs...)}
		case cfg.Plugin.Path == "":
			return configError{fmt.Errorf("config %s: plugin.path is empty", *cfgPath)}
		}
		if len(files) == 0 {
			files = []string{cfg.Plugin.Path}
		}
		if dir == "" {
			dir = cfg.Plugin.CacheDir
		}
	}
	if dir == "" {
		dir = pluginCacheDir()
	}
	if len(files) == 0 || dir == "" {
		return fmt.Errorf("%w: no plugin or no cache directory: %s", errUsage, usage)
	}
	for _, f := range files {
		start := time.Now()
		// Loading through the host compiles exactly as the daemon will (the
		// same isolation, so the same cache key) and checks the module.
		info, err := wasmhost.Inspect(ctx, f, wasmhost.Options{CacheDir: dir, Logger: log})
		if err != nil {
			return fmt.Errorf("compile %s: %w", f, err)
		}
		fmt.Fprintf(out, "%s: %s %s compiled into %s in %s\n", f, info.Name, info.Version, dir, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
