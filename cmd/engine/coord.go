package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/ops"
)

// coordinator is the daemon's side of [coord]: before each cycle it syncs
// with etcd, hands the engine the scope it holds, and gives the cycle a
// context that ends before the lease behind that scope can expire. It
// lives as long as `engine run`, across reloads.
type coordinator struct {
	c    membership
	root context.Context // the daemon's: ends on SIGTERM
	base engine.Scope    // from [scope]
	div  coord.Division
	cfg  *config.Config // as loaded at start: a reload may not change the membership
	log  *slog.Logger
	// ident is the Placement identity the shared record is kept under, as
	// resolved for the client identFor (coord_record.go).
	ident    string
	identFor *placement.Client
	reload   bool
	// last is the assignment of the last BeforeCycle: a node sync beside
	// the cycle it narrowed runs fenced on it (coord_setup.go).
	last coord.Assignment
}

// errNothingHeld: this engine holds no unit now; the cycle is skipped,
// which is not a failure (more engines than units, or waiting for a peer
// to release).
var errNothingHeld = errors.New("holding no unit")

// startCoordinator registers the engine in etcd or through Kubernetes;
// nil without [coord].
func startCoordinator(ctx context.Context, cfg *config.Config, log *slog.Logger) (*coordinator, error) {
	if !cfg.Coord.Enabled() {
		return nil, nil
	}
	div := division(cfg)
	// A refused certificate or login stops the start, named, rather than
	// a registration that times out.
	if cfg.Coord.Backend != config.BackendKubernetes {
		if err := etcdAccepts(ctx, cfg); err != nil {
			return nil, err
		}
	}
	cc := coord.Config{
		Endpoints:  cfg.Coord.Etcd,
		Access:     etcdAccess(cfg),
		Prefix:     cfg.Coord.Prefix,
		Member:     cfg.Engine.ID,
		OwnerTrait: engine.OwnerTrait(cfg.Engine.ID),
		TTL:        cfg.Coord.LeaseTTL.D(),
		Division:   div,
		Static:     coord.StaticUnits(cfg.Scope.Shards, cfg.Scope.ConductorGroups),
		Log:        log,
	}
	c, err := join(ctx, cfg, cc)
	if err != nil {
		return nil, fmt.Errorf("coord: %w", err)
	}
	log.Info("coordinating", "backend", cfg.Coord.Backend, "etcd", cfg.Coord.Etcd, "security", etcdSecurity(cfg),
		"namespace", cfg.Coord.Namespace, "division", div.String(), "prefix", cfg.Coord.Prefix)
	return &coordinator{c: c, root: ctx, base: policy(cfg).Scope, div: div, cfg: cfg, log: log}, nil
}

// registerMetrics exposes the requests sent to the coordination backend,
// so that its cost per cycle can be watched (and benched).
func (co *coordinator) registerMetrics(o *ops.Ops) {
	if co == nil {
		return
	}
	o.Metrics.Registry().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rpengine_coord_requests_total",
		Help: "Requests sent to the coordination backend: etcd calls and streams opened, or Kubernetes API requests."},
		func() float64 { return float64(co.c.Requests()) }))
}

// BeforeCycle syncs with etcd and sets eng's scope to what this engine
// holds. The cycle must run under cycleCtx and call cancel when done. On
// an error no cycle may run: the engine cannot prove what it holds.
func (co *coordinator) BeforeCycle(ctx context.Context, eng *engine.Engine, pc *placement.Client) (cycleCtx context.Context, cancel context.CancelFunc, err error) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-co.root.Done(): // SIGTERM while syncing
			stop()
		case <-sctx.Done():
		}
	}()
	a, err := co.c.Sync(sctx)
	if err != nil {
		return nil, nil, fmt.Errorf("coord: %w; no writes this cycle", err)
	}
	if len(a.Held) == 0 {
		return nil, nil, errNothingHeld
	}
	scope, takeover := co.base, a.MayTakeOver
	switch {
	case co.div.Partitions > 0:
		scope.Partitions, scope.Held = co.div.Partitions, coord.Partitions(a.Held)
	case len(co.div.Shards) > 0:
		scope.Shards = coord.Shards(a.Held)
	default:
		takeover = nil // static engines take nothing over
	}
	eng.SetScope(scope, takeover)
	if len(a.Acquired)+len(a.Released) > 0 || len(a.Waiting) > 0 {
		co.log.Info("assignment", "held", len(a.Held), "acquired", a.Acquired, "released", a.Released,
			"waiting_for_peers", a.Waiting, "members", a.Members)
	}
	co.last = a
	cycleCtx, cancel = co.c.Fence(ctx, a)
	if err := co.shareRecord(cycleCtx, eng, pc, a); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("coord: %w; no writes this cycle", err)
	}
	return cycleCtx, cancel, nil
}

// watch asks for a cycle now, as SIGUSR1 does, when a peer joins or
// leaves or a unit is released (coord.Watch): a dead peer's nodes are
// taken over once etcd expires its lease, not an interval later.
func (co *coordinator) watch(ctx context.Context, now chan struct{}) {
	if co != nil {
		ask := cycleNow(now)
		go co.c.Watch(ctx, func() { ask() })
	}
}

// Close leaves the group; call it after the last cycle.
func (co *coordinator) Close() {
	if co != nil {
		co.c.Close()
	}
}

// uncoordinated refuses a one-shot write cycle under [coord]: it would
// write without holding any claim. plan (dry) writes nothing and may run.
func uncoordinated(cfg *config.Config, dry bool) error {
	if cfg.Coord.Enabled() && !dry {
		return fmt.Errorf("%w: with [coord], only `engine run` writes (it holds claims in %s); use plan to look", errUsage, cfg.Coord.Backend)
	}
	return nil
}

// division is what the engines of cfg's fleet divide, within its scope.
func division(cfg *config.Config) coord.Division {
	var within []string
	if s := cfg.Scope.Shards; len(s) > 0 {
		within = append(within, "shards="+strings.Join(s, ","))
	}
	if g := cfg.Scope.ConductorGroups; len(g) > 0 {
		within = append(within, "conductor_groups="+strings.Join(g, ","))
	}
	return coord.Division{Partitions: cfg.Coord.Partitions, Shards: cfg.Coord.Shards, Within: strings.Join(within, " ")}
}
