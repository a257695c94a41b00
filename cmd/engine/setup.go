package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/config"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi/wasmhost"
)

// world is everything a verb needs, built from one config file.
type world struct {
	cfg    *config.Config
	pc     *placement.Client
	plugin *wasmhost.Plugin
	eng    *engine.Engine
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: --config FILE is required", errUsage)
	}
	return config.Load(path)
}

func connect(ctx context.Context, cfg *config.Config) (*placement.Client, error) {
	return placement.New(ctx, placement.Config{
		Endpoint: cfg.Placement.Endpoint,
		Token:    cfg.Placement.Token,
		Timeout:  cfg.Placement.Timeout.D(),
		MaxConns: cfg.Placement.Connections,
	})
}

func loadPlugin(ctx context.Context, cfg *config.Config, log *slog.Logger) (*wasmhost.Plugin, error) {
	raw, err := cfg.PluginConfig()
	if err != nil {
		return nil, fmt.Errorf("plugin.config: %w", err)
	}
	cache := cfg.Plugin.CacheDir
	if cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "rpengine", "wazero")
		}
	}
	return wasmhost.Load(ctx, cfg.Plugin.Path, raw, wasmhost.Options{
		MemoryLimit: uint64(cfg.Plugin.MemoryLimit),
		CallTimeout: cfg.Plugin.Timeout.D(),
		CacheDir:    cache,
		Services:    cfg.Plugin.Services,
		Logger:      log,
		Stderr:      os.Stderr,
	})
}

func setup(ctx context.Context, path string, log *slog.Logger) (*world, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	pc, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	plugin, err := loadPlugin(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	key := cfg.Placement.Endpoint + " " + cfg.Engine.ID
	state, err := engine.LoadState(cfg.Engine.StateFile, key)
	if err != nil {
		log.Warn("state cache ignored", "err", err)
	}
	pol := engine.Policy{
		OwnerTrait:   engine.OwnerTrait(cfg.Engine.ID),
		MarkerTraits: cfg.Provider.MarkerTraits,
		Aggregates:   cfg.Provider.Aggregates,
		Scope:        engine.Scope{Shards: cfg.Scope.Shards, ConductorGroups: cfg.Scope.ConductorGroups},
	}
	opts := engine.Options{Concurrency: cfg.Engine.Concurrency, MaxAttempts: cfg.Engine.MaxAttempts,
		DeleteGrace: cfg.Engine.DeleteGrace.D(), DeleteLimit: cfg.Engine.DeleteLimit}
	eng := engine.New(plugin, pc, pol, opts, state, log)
	return &world{cfg: cfg, pc: pc, plugin: plugin, eng: eng}, nil
}

func (w *world) close(ctx context.Context) { w.plugin.Close(ctx) }
