package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
	"github.com/rpengine/rpengine/internal/redact"
)

// progressEvery spaces the progress lines of a long cycle.
const progressEvery = 10 * time.Second

// daemonSetup is one loaded config for `engine run` (a daemon.Setup):
// its assembly, plus what the loop needs to run it.
type daemonSetup struct {
	*assembly
	info  ops.Info
	level slog.Level
	ev    *worldEvents // [events], nil without (events.go)
	drift *driftBook   // engine.mode = "observe" (observe.go), else nil
	log   *slog.Logger
}

// Cycle reconciles; in observe mode it plans, and reports the drift.
func (w *daemonSetup) Cycle(ctx context.Context) engine.Report {
	if w.drift != nil {
		return w.observeCycle(ctx)
	}
	return w.eng.Cycle(ctx)
}
func (w *daemonSetup) Save() error               { return w.state.Save() }
func (w *daemonSetup) Close(ctx context.Context) { w.ev.stop(); w.close(ctx) }

func (w *daemonSetup) Settings() daemon.Settings {
	return daemon.Settings{Interval: w.cfg.Engine.Interval.D(), StopTimeout: w.cfg.Engine.StopTimeout.D(),
		LogLevel: w.level, Info: w.info, FullInterval: w.cfg.Events.FullInterval.D()}
}

// loadSetup reads the config at path and assembles its engine for the
// daemon. On a reload it runs beside the running setup (prev), whose
// provider cache it keeps when the state file and its key are the same.
func loadSetup(ctx context.Context, path string, observe bool, log *slog.Logger, o *ops.Ops, stop <-chan struct{}, prev daemon.Setup) (daemon.Setup, error) {
	cfg, err := loadRunConfig(path, observe)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		log.Warn("credential file readable by others", "detail", w)
	}
	level, err := ops.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	d := &daemonParts{ops: o, stop: stop}
	if p, ok := prev.(*daemonSetup); ok {
		d.prev = p.assembly
	}
	a, err := assemble(ctx, cfg, log, d)
	if err != nil {
		return nil, err
	}
	pi := a.plugin.Info()
	w := &daemonSetup{assembly: a, level: level, log: log}
	o.WatchDrift(nil)
	if cfg.Engine.Mode == "observe" {
		w.drift = driftBookFor(o)
		o.WatchDrift(w.drift.list)
		log.Info("observe mode: Placement is read, never written; each cycle and node sync reports the drift (engine.mode)")
	}
	if w.ev, err = startEvents(ctx, cfg, a, o, log); err != nil {
		a.close(ctx)
		return nil, err
	}
	w.info = ops.Info{EngineID: cfg.Engine.ID, Plugin: a.plugin.Name(), PluginVersion: pi.Version, Placement: redact.URL(a.cloud.placement),
		Auth: a.cloud.sess.String(), Interval: cfg.Engine.Interval.D(), UnhealthyAfter: cfg.Server.UnhealthyAfter,
		History: cfg.Server.History, LoadedAt: time.Now(), ConfigPath: absPath(path), ConfigSHA256: fileSHA256(path),
		Zones: cfg.AggregateRules()}
	o.Metrics.SetPlugin(pi.Name, pi.Version, strconv.Itoa(int(pi.ABIVersion)))
	log.Info("configuration loaded", "config", path, "plugin", a.plugin.Name(),
		"placement", redact.URL(a.cloud.placement), "microversion", a.pc.Microversion(), "auth", a.cloud.sess.String())
	return w, nil
}
