package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// assembly is an engine built from one config file, with what it was
// built from. Every verb that runs cycles, and the daemon, build it with
// assemble: one path, so `once`, `plan` and `run` cannot differ in how
// they set the engine up.
type assembly struct {
	cfg    *config.Config
	cloud  *cloud
	pc     *placement.Client
	plugin *wasmhost.Plugin
	state  *engine.State
	key    string // what the state file belongs to (cloud.stateKey)
	eng    *engine.Engine
	// snapshot: a plan, which may read the file of the engine holding it.
	snapshot bool
}

// daemonParts are what `engine run` adds to an assembly: metrics on every
// call, the stop that ends plugin calls and provider syncs, its observers,
// and the running assembly, whose state a reload keeps.
type daemonParts struct {
	ops  *ops.Ops
	stop <-chan struct{}
	prev *assembly
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

func loadPlugin(ctx context.Context, cfg *config.Config, c *cloud, log *slog.Logger) (*wasmhost.Plugin, error) {
	raw, err := cfg.PluginConfig()
	if err != nil {
		return nil, fmt.Errorf("plugin.config: %w", err)
	}
	return wasmhost.Load(ctx, cfg.Plugin.Path, raw, c.pluginOptions(cfg, log))
}

// setup reads the config at path and assembles its engine, for a verb.
func setup(ctx context.Context, path string, log *slog.Logger) (*assembly, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	return assemble(ctx, cfg, log, nil)
}

// assemble builds the engine of cfg; d is nil but for the daemon.
func assemble(ctx context.Context, cfg *config.Config, log *slog.Logger, d *daemonParts) (*assembly, error) {
	return build(ctx, cfg, log, d, false)
}

// build is assemble; a plan (snapshot) reads a state file another engine
// process holds instead of failing (cloud.openState).
func build(ctx context.Context, cfg *config.Config, log *slog.Logger, d *daemonParts, snapshot bool) (*assembly, error) {
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	var hooks *placementHooks
	if d != nil {
		d.ops.Metrics.WatchAuth(c.sess)
		hooks = &placementHooks{observe: d.ops.Metrics.ObservePlacement, log: log}
		c.pluginHTTP = d.ops.Metrics.PluginHTTP
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
	a := &assembly{cfg: cfg, cloud: c, key: c.stateKey(cfg), snapshot: snapshot}
	err = a.openState(d, log)
	if err == nil {
		a.pc, err = c.connect(ctx, cfg, hooks)
	}
	if err == nil && d != nil {
		d.ops.WatchPlacement(a.pc)
	}
	l := <-plug
	if err == nil {
		err = l.err
	}
	if err != nil {
		if l.p != nil {
			l.p.Close(ctx)
		}
		return nil, err
	}
	a.plugin = l.p
	a.eng = a.newEngine(d, log)
	return a, nil
}

// openState opens the state file, or keeps the running assembly's state
// when a reload names the same file for the same Placement and engine id,
// so what the running engine learns meanwhile is not lost.
func (a *assembly) openState(d *daemonParts, log *slog.Logger) error {
	if d != nil && d.prev != nil && d.prev.key == a.key && d.prev.cfg.Engine.StateFile == a.cfg.Engine.StateFile {
		a.state = d.prev.state
		a.cloud.microversion = a.state.Microversion()
		return nil
	}
	var err error
	a.state, err = a.cloud.openState(a.cfg, log, a.snapshot)
	return err
}

// newEngine is the engine of the assembly; the daemon's observes and
// stops it, and times every plugin call.
func (a *assembly) newEngine(d *daemonParts, log *slog.Logger) *engine.Engine {
	if d == nil {
		return a.engineOver(a.plugin, nil, log)
	}
	// The API's plans keep their listings (api.go). Stoppable outside
	// Timed, so a call ended by the stop counts as "canceled", not as a
	// plugin error.
	src := ops.StoppableSource(ops.TimedSource(tappedPlugin{a.plugin}, d.ops.Metrics), d.stop)
	return a.engineOver(src, func(opts *engine.Options) {
		opts.Progress = d.ops.Progress(log, progressEvery)
		opts.Stop = d.stop
		opts.Observer = d.ops
	}, log)
}

// engineOver is the one assembly of an engine from the config, over src
// (the plugin, or a wrapper of it); tune, if not nil, adds the daemon's
// options. Every verb builds its engine here.
func (a *assembly) engineOver(src engine.Source, tune func(*engine.Options), log *slog.Logger) *engine.Engine {
	opts := options(a.cfg)
	opts.Plugin = a.plugin.Name()
	if tune != nil {
		tune(&opts)
	}
	return engine.New(src, a.pc, policy(a.cfg), opts, a.state, log)
}

// policy and options are the engine's settings from cfg.
func policy(cfg *config.Config) engine.Policy {
	return engine.Policy{
		OwnerTrait:   ownerTrait(cfg),
		FleetMarker:  cfg.FleetMarker(),
		MarkerTraits: cfg.Provider.MarkerTraits,
		Aggregates:   cfg.Provider.Aggregates,
		Scope:        engine.Scope{Shards: cfg.Scope.Shards, ConductorGroups: cfg.Scope.ConductorGroups},
		Nova:         beside(cfg),

		AggregateRules: cfg.AggregateRules(),
	}
}

// ownerTrait is the marker of the providers this engine manages: its own,
// or its fleet's (config.FleetMarker; docs/NOVA.md "Several engines").
func ownerTrait(cfg *config.Config) string {
	if id := cfg.FleetID(); id != "" {
		return engine.OwnerTrait(id)
	}
	return engine.OwnerTrait(cfg.Engine.ID)
}

func options(cfg *config.Config) engine.Options {
	return engine.Options{Concurrency: cfg.Engine.Concurrency, MaxAttempts: cfg.Engine.MaxAttempts,
		DeleteGrace: cfg.Engine.DeleteGrace.D(), DeleteLimit: cfg.Engine.DeleteLimit, NewNames: cfg.Placement.NewNamesPerCycle}
}

func (a *assembly) close(ctx context.Context) { a.plugin.Close(ctx); a.cloud.close(ctx) }
