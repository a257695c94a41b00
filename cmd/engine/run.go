package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
)

// jitter is the largest fraction of the interval added to each wait, so
// engines started together do not hit Placement in step.
const jitter = 0.1

// cmdRun is the daemon: a cycle every interval until SIGTERM or SIGINT
// (ctx), a reload on SIGHUP, and, with server.listen, /metrics, /healthz,
// /readyz and the status page. See internal/ops/daemon for the lifecycle.
// observe (--observe) sets engine.mode = "observe" over the file, at start
// and at every reload.
func cmdRun(ctx context.Context, path string, observe bool, log *slog.Logger) error {
	cfg, err := loadRunConfig(path, observe)
	if err != nil {
		return err
	}
	setMemoryLimit(cfg, log)
	o := ops.New(time.Now)
	v := readVersion()
	o.Metrics.SetBuildInfo(v.Version, v.Commit, v.Go, v.Wazero, strconv.Itoa(v.ABI))
	// log.level applies to the handler --log-format chose; the status
	// page reads the engine's events (engine.Options.Observer), not logs.
	level := new(slog.LevelVar)
	// Every record names the engine (run adds engine.id to every
	// verb's logger), so a pipeline that gathers several engines' logs
	// can tell them apart; a reload keeps it.
	log = slog.New(ops.Leveled(log.Handler(), level))
	listen := serveConfig(cfg)
	stopServing, err := serve(o, listen, log)
	if err != nil {
		return err
	}
	defer stopServing()
	co, err := startCoordinator(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer co.Close()
	co.registerMetrics(o)
	// The local API (internal/ops/api.go): plans run by the loop between
	// cycles; a cycle now is SIGUSR1's request.
	now, asks := signalled(ctx, syscall.SIGUSR1), make(chan daemon.Ask)
	var reader atomic.Pointer[pageReader] // the setup in use, for the node page
	pause, resume := pauseThrough(asks)
	o.SetAPI(&ops.API{Plan: planThrough(asks, log), CycleNow: cycleNow(now), Allocations: pageAllocations(&reader),
		Provider: pageProvider(&reader), Key: apiKey(cfg, log), Pause: pause, Resume: resume})
	co.watch(ctx, now)
	watched, reload := watchPlugin(ctx, cfg, log)
	loop := &daemon.Loop{
		Load: func(ctx context.Context, stop <-chan struct{}, prev daemon.Setup) (daemon.Setup, error) {
			w, err := loadSetup(ctx, path, observe, log, o, stop, unwrap(prev))
			if err == nil {
				dw := w.(*daemonSetup)
				watched.Store(dw.cfg.Plugin)
				reader.Store(&pageReader{pc: dw.pc, owner: ownerTrait(dw.cfg)})
				if now := serveConfig(dw.cfg); !reflect.DeepEqual(now, listen) {
					log.Warn("[server] listeners changed: they take effect at the next restart", "listening", listen.Listen)
				}
			}
			return co.wrap(w), err
		},
		Reload: reload,
		Now:    now,
		Asks:   asks,
		Log:    log,
		Ops:    o,
		Level:  level,
		Jitter: jitter,
	}
	return loop.Run(ctx)
}

// apiKey is a fresh key the verbs' answers are proved with (apikey.go);
// nil, said, when it cannot be written.
func apiKey(cfg *config.Config, log *slog.Logger) []byte {
	key, err := newAPIKey(apiKeyPath(cfg))
	if err != nil {
		log.Warn("the verbs will not trust this daemon's API: they compute plans themselves", "err", err)
	}
	return key
}

// serve starts the listeners [server] asks for, if any; stop ends them.
func serve(o *ops.Ops, listen ops.ServeConfig, log *slog.Logger) (stop func(), err error) {
	if listen.Listen == "" {
		return func() {}, nil
	}
	addrs, stop, err := o.ServeWith(listen, log)
	if err != nil {
		return nil, err
	}
	security, _ := ops.WebSecurity(listen.WebConfigFile) // ServeWith checked it
	if len(addrs) > 1 {
		log.Info("serving /healthz, /readyz and the status page", "addr", addrs[0], "security", security)
		log.Info("serving /metrics", "metrics_addr", addrs[1])
	} else {
		log.Info("serving /metrics, /healthz, /readyz and the status page", "addr", addrs[0], "security", security)
	}
	return stop, nil
}

// watchPlugin reloads on SIGHUP and when the plugin file's content
// changes; watched holds the plugin of the setup in use.
func watchPlugin(ctx context.Context, cfg *config.Config, log *slog.Logger) (watched *atomic.Value, reload <-chan struct{}) {
	watched = new(atomic.Value)
	watched.Store(cfg.Plugin)
	hup := hangups(ctx)
	go watchFile(ctx, func() (string, bool) {
		p := watched.Load().(config.Plugin)
		return p.Path, p.ReloadOnChange
	}, pluginPoll, hup, log)
	return watched, hup
}

// serveConfig is what [server] says of the HTTP listeners.
func serveConfig(cfg *config.Config) ops.ServeConfig {
	s := cfg.Server
	return ops.ServeConfig{Listen: s.Listen, MetricsListen: s.MetricsListen, WebConfigFile: s.WebConfigFile, AllowedHosts: s.AllowedHosts}
}

// pluginPoll is how often the plugin file is checked for a new build.
const pluginPoll = 2 * time.Second

// watchFile asks for a reload (as SIGHUP does) when the content of the
// plugin file at current() changes, while current says the watch is on
// (plugin.reload_on_change). A broken file is refused by the reload and
// the old plugin keeps serving.
func watchFile(ctx context.Context, current func() (string, bool), every time.Duration, reload chan<- struct{}, log *slog.Logger) {
	p, _ := current()
	w := newPluginWatch(p)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, on := current()
		if changed := w.changed(p); changed && on {
			log.Info("plugin file content changed: reloading", "path", p)
			select {
			case reload <- struct{}{}:
			default:
			}
		}
	}
}

// pluginWatch tells when a file's content changed. The size and time
// stamp are read at each check; the file is hashed only when they moved,
// so an idle check costs one stat, and a rewrite of the same bytes is no
// change.
type pluginWatch struct {
	path  string
	stamp string
	sum   [sha256.Size]byte
}

func newPluginWatch(path string) *pluginWatch {
	w := &pluginWatch{}
	w.changed(path)
	return w
}

// changed says whether the file at path differs from the one seen at
// the last check. A new path is a new baseline, not a change: the reload
// that changed the path loaded that file.
func (w *pluginWatch) changed(path string) bool {
	st := fileStamp(path)
	if path != w.path {
		w.path, w.stamp, w.sum = path, st, hashFile(path)
		return false
	}
	if st == w.stamp {
		return false
	}
	w.stamp = st
	sum := hashFile(path)
	if sum == w.sum {
		return false
	}
	w.sum = sum
	return true
}

func fileStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "missing"
	}
	return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
}

// hashFile is the file's SHA-256; zero when unreadable (a missing file is
// a change, which the reload then refuses).
func hashFile(p string) (sum [sha256.Size]byte) {
	f, err := os.Open(p)
	if err != nil {
		return sum
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum
	}
	copy(sum[:], h.Sum(nil))
	return sum
}

// hangups turns SIGHUP into reload requests until ctx ends. Signals that
// arrive while one is pending merge into it.
func hangups(ctx context.Context) chan struct{} { return signalled(ctx, syscall.SIGHUP) }

// signalled turns signal s into requests until ctx ends; those that
// arrive while one is pending merge into it (SIGUSR1: a cycle now).
func signalled(ctx context.Context, s os.Signal) chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, s)
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
