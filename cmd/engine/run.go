package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// jitter is the largest fraction of the interval added to each wait, so
// engines started together do not hit Placement in step.
const jitter = 0.1

// cmdRun is the daemon: a cycle every interval until SIGTERM or SIGINT
// (ctx), a reload on SIGHUP, and, with server.listen, /metrics, /healthz,
// /readyz and the status page. See internal/ops/daemon for the lifecycle.
func cmdRun(ctx context.Context, path string, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	o := ops.New(time.Now)
	// log.level applies to the handler --log-format chose; the status
	// page reads the engine's events (engine.Options.Observer), not logs.
	level := new(slog.LevelVar)
	log = slog.New(ops.Leveled(log.Handler(), level))

	listen := cfg.Server.Listen
	if listen != "" {
		addr, stop, err := o.Serve(listen, log)
		if err != nil {
			return err
		}
		defer stop()
		log.Info("serving /metrics, /healthz, /readyz and the status page", "addr", addr)
	}

	// [coord]: several engines share the fleet through etcd (coord.go).
	co, err := startCoordinator(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer co.Close()

	var pluginPath atomic.Value // of the world in use, for the file watch
	pluginPath.Store(cfg.Plugin.Path)
	reload := hangups(ctx)
	go watchFile(ctx, func() string { return pluginPath.Load().(string) }, pluginPoll, reload, log)
	loop := &daemon.Loop{
		Load: func(ctx context.Context, stop <-chan struct{}, prev daemon.World) (daemon.World, error) {
			w, err := loadWorld(ctx, path, log, o, stop, unwrap(prev))
			if err == nil {
				dw := w.(*daemonWorld)
				pluginPath.Store(dw.cfg.Plugin.Path)
				if dw.cfg.Server.Listen != listen {
					log.Warn("server.listen changed: it takes effect at the next restart", "listening", listen)
				}
			}
			return co.wrap(w), err
		},
		Reload: reload,
		Log:    log,
		Ops:    o,
		Level:  level,
		Jitter: jitter,
	}
	return loop.Run(ctx)
}

// pluginPoll is how often the plugin file is checked for a new build.
const pluginPoll = 2 * time.Second

// watchFile asks for a reload (as SIGHUP does) when the file at path()
// changes size or modification time: deploying a new plugin build is
// enough to swap it in. A broken file is refused by the reload and the
// old plugin keeps serving.
func watchFile(ctx context.Context, path func() string, every time.Duration, reload chan<- struct{}, log *slog.Logger) {
	stamp := func(p string) string {
		fi, err := os.Stat(p)
		if err != nil {
			return "missing"
		}
		return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	p := path()
	seen := stamp(p)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if np := path(); np != p {
			p, seen = np, stamp(np)
			continue
		}
		if now := stamp(p); now != seen {
			seen = now
			log.Info("plugin file changed: reloading", "path", p)
			select {
			case reload <- struct{}{}:
			default:
			}
		}
	}
}

// hangups turns SIGHUP into reload requests until ctx ends. Signals that
// arrive while one is pending merge into it.
func hangups(ctx context.Context) chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	out := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}
