package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
	"github.com/rpengine/rpengine/internal/testing/memsource"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

func nodeUUID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fleet(n int) []hostabi.Node {
	out := make([]hostabi.Node, n)
	for i := range out {
		out[i] = hostabi.Node{UUID: nodeUUID(i), ResourceClass: "baremetal-gold",
			PowerState: "power on", ProvisionState: "available"}
	}
	return out
}

// conf is what a test "config file" holds; the loader reads the current
// one, as the real loader reads the file on SIGHUP.
type conf struct {
	markers     []string
	interval    time.Duration
	stopTimeout time.Duration
	broken      error // the loader fails with it
}

// rig is a daemon over the fake Placement with a real engine.
type rig struct {
	t         *testing.T
	fake      *placementfake.Server
	src       *memsource.Source
	stateFile string
	ops       *ops.Ops
	logs      *syncBuffer

	mu          sync.Mutex
	conf        conf
	loads       int
	worlds      []*world
	cycled      chan engine.Report
	progress    func(done, total int)
	concurrency int
}

func newRig(t *testing.T, nodes int) *rig {
	t.Helper()
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	return &rig{t: t, fake: fake, src: memsource.New(memsource.State{Nodes: fleet(nodes)}),
		stateFile: filepath.Join(t.TempDir(), "state.json"), ops: ops.New(nil), logs: &syncBuffer{},
		conf:   conf{markers: []string{"COMPUTE_NODE"}, interval: 5 * time.Millisecond, stopTimeout: time.Minute},
		cycled: make(chan engine.Report, 100), concurrency: 4}
}

func (r *rig) setConf(f func(*conf)) { r.mu.Lock(); f(&r.conf); r.mu.Unlock() }

type world struct {
	eng      *engine.Engine
	state    *engine.State
	settings daemon.Settings
	markers  []string
	mu       sync.Mutex
	closed   bool
}

func (w *world) Cycle(ctx context.Context) engine.Report { return w.eng.Cycle(ctx) }
func (w *world) Save() error                             { return w.state.Save() }
func (w *world) Settings() daemon.Settings               { return w.settings }
func (w *world) Close(context.Context)                   { w.mu.Lock(); w.closed = true; w.mu.Unlock() }
func (w *world) isClosed() bool                          { w.mu.Lock(); defer w.mu.Unlock(); return w.closed }

func (r *rig) load(ctx context.Context, stop <-chan struct{}, prev daemon.Setup) (daemon.Setup, error) {
	r.mu.Lock()
	c := r.conf
	r.loads++
	progress := r.progress
	r.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	pc, err := placement.New(ctx, placement.Config{Endpoint: r.fake.URL(), Token: "admin",
		Observe: r.ops.Metrics.ObservePlacement})
	if err != nil {
		return nil, err
	}
	var state *engine.State
	if p, ok := prev.(*world); ok {
		state = p.state // same file and key: keep the cache in memory
	} else if state, err = engine.LoadState(r.stateFile, "test"); err != nil {
		return nil, err
	}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("test"), MarkerTraits: c.markers}
	opts := engine.Options{Concurrency: r.concurrency, MaxAttempts: 6, DeleteLimit: 0.5, Stop: stop, Progress: progress,
		Observer: r.ops}
	src := ops.StoppableSource(ops.TimedSource(r.src, r.ops.Metrics), stop)
	log := slog.New(slog.NewTextHandler(r.logs, nil))
	w := &world{eng: engine.New(src, pc, pol, opts, state, log), state: state, markers: c.markers,
		settings: daemon.Settings{Interval: c.interval, StopTimeout: c.stopTimeout,
			Info: ops.Info{EngineID: "test", Interval: c.interval, UnhealthyAfter: 3, History: 50}}}
	r.mu.Lock()
	r.worlds = append(r.worlds, w)
	r.mu.Unlock()
	return w, nil
}

// start runs the loop until the returned stop is called; stop waits for
// Run to return and gives its error.
func (r *rig) start(reload <-chan struct{}) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &daemon.Loop{Load: r.load, Reload: reload, Log: slog.New(slog.NewTextHandler(r.logs, nil)), Ops: r.ops,
		Jitter: 0.1, Cycled: func(rep engine.Report) { r.cycled <- rep }}
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	r.t.Cleanup(cancel)
	return func() error { cancel(); return <-errc }
}

// startWith is start with the context given, for stops from inside a cycle.
func (r *rig) startWith(ctx context.Context, reload <-chan struct{}) <-chan error {
	l := &daemon.Loop{Load: r.load, Reload: reload, Log: slog.New(slog.NewTextHandler(r.logs, nil)), Ops: r.ops,
		Cycled: func(rep engine.Report) { r.cycled <- rep }}
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	return errc
}

func (r *rig) next() engine.Report {
	r.t.Helper()
	select {
	case rep := <-r.cycled:
		return rep
	case <-time.After(30 * time.Second):
		r.t.Fatalf("no cycle in 30s; logs:\n%s", r.logs)
		return engine.Report{}
	}
}

// complete checks that a provider is fully written: inventory, owner
// trait and every marker. A provider cut mid-write lacks some.
func (r *rig) complete(uuid string, markers []string) error {
	p, ok := r.fake.Provider(uuid)
	if !ok {
		return fmt.Errorf("provider %s missing", uuid)
	}
	if inv, ok := p.Inventories["CUSTOM_BAREMETAL_GOLD"]; !ok || inv.Total != 1 {
		return fmt.Errorf("provider %s half-written: inventory %v", uuid, p.Inventories)
	}
	for _, t := range append([]string{engine.OwnerTrait("test")}, markers...) {
		if !slices.Contains(p.Traits, t) {
			return fmt.Errorf("provider %s half-written: traits %v lack %s", uuid, p.Traits, t)
		}
	}
	return nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
