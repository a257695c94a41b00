package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
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
	// log.level applies to the handler --log-format chose; the tap feeds
	// the status page whatever the level.
	level := new(slog.LevelVar)
	log = slog.New(o.Tap(ops.Leveled(log.Handler(), level)))

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

	loop := &daemon.Loop{
		Load: func(ctx context.Context, stop <-chan struct{}, prev daemon.World) (daemon.World, error) {
			w, err := loadWorld(ctx, path, log, o, stop, unwrap(prev))
			if err == nil && w.(*daemonWorld).cfg.Server.Listen != listen {
				log.Warn("server.listen changed: it takes effect at the next restart", "listening", listen)
			}
			return co.wrap(w), err
		},
		Reload: hangups(ctx),
		Log:    log,
		Ops:    o,
		Level:  level,
		Jitter: jitter,
	}
	return loop.Run(ctx)
}

// hangups turns SIGHUP into reload requests until ctx ends. Signals that
// arrive while one is pending merge into it.
func hangups(ctx context.Context) <-chan struct{} {
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
