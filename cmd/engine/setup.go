package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// world is everything a verb needs, built from one config file.
type world struct {
	cfg    *config.Config
	pc     *placement.Client
	plugin *wasmhost.Plugin
	eng    *engine.Engine
	cloud  *cloud
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: --config FILE is required", errUsage)
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, configError{err}
	}
	return cfg, nil
}

// configError is a config file's error, shown as it is, with exit
// status 2.
type configError struct{ error }

func (e configError) Unwrap() []error { return []error{e.error, errConfig} }

func connect(ctx context.Context, cfg *config.Config) (*placement.Client, error) {
	c, err := openCloud(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	return c.connect(ctx, cfg, nil)
}

func loadPlugin(ctx context.Context, cfg *config.Config, c *cloud, log *slog.Logger) (*wasmhost.Plugin, error) {
	raw, err := cfg.PluginConfig()
	if err != nil {
		return nil, fmt.Errorf("plugin.config: %w", err)
	}
	return wasmhost.Load(ctx, cfg.Plugin.Path, raw, c.pluginOptions(cfg, log))
}

func setup(ctx context.Context, path string, log *slog.Logger) (*world, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	// Starting the plugin (a child process, compiled code from the cache)
	// overlaps with Placement and the state file: restarts are faster.
	type loaded struct {
		p   *wasmhost.Plugin
		err error
	}
	plug := make(chan loaded, 1)
	go func() {
		p, err := loadPlugin(ctx, cfg, c, log)
		plug <- loaded{p, err}
	}()
	state, err := c.openState(cfg, log)
	var pc *placement.Client
	if err == nil {
		pc, err = c.connect(ctx, cfg, nil)
	}
	if err != nil {
		if l := <-plug; l.p != nil {
			l.p.Close(ctx)
		}
		return nil, err
	}
	l := <-plug
	if l.err != nil {
		return nil, l.err
	}
	plugin := l.p
	opts := options(cfg)
	opts.Plugin = plugin.Name()
	eng := engine.New(plugin, pc, policy(cfg), opts, state, log)
	return &world{cfg: cfg, pc: pc, plugin: plugin, eng: eng, cloud: c}, nil
}

// policy and options are the engine's settings from cfg; the daemon
// (run.go) adds its hooks to the same.
func policy(cfg *config.Config) engine.Policy {
	return engine.Policy{
		OwnerTrait:   engine.OwnerTrait(cfg.Engine.ID),
		MarkerTraits: cfg.Provider.MarkerTraits,
		Aggregates:   cfg.Provider.Aggregates,
		Scope:        engine.Scope{Shards: cfg.Scope.Shards, ConductorGroups: cfg.Scope.ConductorGroups},
		Nova:         beside(cfg),
	}
}

func options(cfg *config.Config) engine.Options {
	return engine.Options{Concurrency: cfg.Engine.Concurrency, MaxAttempts: cfg.Engine.MaxAttempts,
		DeleteGrace: cfg.Engine.DeleteGrace.D(), DeleteLimit: cfg.Engine.DeleteLimit, NewNames: cfg.Placement.NewNamesPerCycle}
}

func (w *world) close(ctx context.Context) { w.plugin.Close(ctx); w.cloud.close(ctx) }
