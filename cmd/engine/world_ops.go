package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// progressEvery spaces the progress lines of a long cycle.
const progressEvery = 10 * time.Second

// daemonWorld is one loaded config for `engine run`: the engine of
// setup(), plus the daemon's observers and its stop channel.
type daemonWorld struct {
	cfg    *config.Config
	plugin *wasmhost.Plugin
	eng    *engine.Engine
	pc     *placement.Client
	state  *engine.State
	key    string
	info   ops.Info
	level  slog.Level
	cloud  *cloud
	ev     *worldEvents // [events], nil without (events.go)
}

func (w *daemonWorld) Cycle(ctx context.Context) engine.Report { return w.eng.Cycle(ctx) }
func (w *daemonWorld) Save() error                             { return w.state.Save() }
func (w *daemonWorld) Close(ctx context.Context) {
	w.ev.stop()
	w.plugin.Close(ctx)
	w.cloud.close(ctx)
}

func (w *daemonWorld) Settings() daemon.Settings {
	return daemon.Settings{Interval: w.cfg.Engine.Interval.D(), StopTimeout: w.cfg.Engine.StopTimeout.D(),
		LogLevel: w.level, Info: w.info, FullInterval: w.cfg.Events.FullInterval.D()}
}

// loadWorld reads the config at path and builds everything a cycle needs.
// On a reload it runs beside the running world (prev): it keeps prev's
// provider cache in memory when the state file and its key are the same,
// so what the running world learns meanwhile is not lost.
func loadWorld(ctx context.Context, path string, log *slog.Logger, o *ops.Ops, stop <-chan struct{}, prev daemon.World) (daemon.World, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	level, err := ops.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	o.Metrics.WatchAuth(c.sess)
	key := c.stateKey(cfg)
	var state *engine.State
	if p, ok := prev.(*daemonWorld); ok && p.key == key && p.cfg.Engine.StateFile == cfg.Engine.StateFile {
		state = p.state
		c.microversion = state.Microversion()
	} else if state, err = c.openState(cfg, log); err != nil {
		return nil, err
	}
	pc, err := c.connect(ctx, cfg, &placementHooks{observe: o.Metrics.ObservePlacement, log: log})
	if err != nil {
		return nil, err
	}
	o.WatchPlacement(pc)
	c.pluginHTTP = o.Metrics.PluginHTTP
	plugin, err := loadPlugin(ctx, cfg, c, log)
	if err != nil {
		return nil, err
	}
	opts := options(cfg)
	opts.Progress = o.Progress(log, progressEvery)
	opts.Stop = stop
	opts.Plugin = plugin.Name()
	opts.Observer = o
	// Stoppable outside Timed, so a call ended by the stop counts as
	// "canceled", not as a plugin error.
	src := ops.StoppableSource(ops.TimedSource(plugin, o.Metrics), stop)
	w := &daemonWorld{cfg: cfg, plugin: plugin, cloud: c, eng: engine.New(src, pc, policy(cfg), opts, state, log), pc: pc,
		state: state, key: key, level: level}
	w.info = ops.Info{EngineID: cfg.Engine.ID, Plugin: plugin.Name(), PluginVersion: plugin.Info().Version, Placement: c.placement, Auth: c.sess.String(),
		Interval: cfg.Engine.Interval.D(), UnhealthyAfter: cfg.Server.UnhealthyAfter, History: cfg.Server.History,
		LoadedAt: time.Now()}
	if w.ev, err = startEvents(cfg, plugin, o, log); err != nil {
		plugin.Close(ctx)
		return nil, err
	}
	pi := plugin.Info()
	o.Metrics.SetPlugin(pi.Name, pi.Version, strconv.Itoa(int(pi.ABIVersion)))
	log.Info("configuration loaded", "config", path, "engine", cfg.Engine.ID, "plugin", plugin.Name(),
		"placement", c.placement, "microversion", pc.Microversion(), "auth", c.sess.String())
	return w, nil
}
