package ops_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// source is an in-memory inventory that can prove deletions.
type source struct {
	mu        sync.Mutex
	nodes     []hostabi.Node
	instances []hostabi.Instance
	gone      map[string]bool
	failNodes error
}

func (s *source) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNodes != nil {
		return nil, s.failNodes
	}
	return slices.Clone(s.nodes), nil
}

func (s *source) ListInstances(context.Context) ([]hostabi.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.instances), nil
}

func (s *source) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range uuids {
		if s.gone[u] {
			deleted = append(deleted, u)
		} else {
			present = append(present, u)
		}
	}
	return deleted, present, nil
}

func (s *source) set(f func(*source)) { s.mu.Lock(); f(s); s.mu.Unlock() }

func nodeUUID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fleet(n int) []hostabi.Node {
	out := make([]hostabi.Node, n)
	for i := range out {
		out[i] = hostabi.Node{UUID: nodeUUID(i), ResourceClass: "baremetal-gold",
			PowerState: "power on", ProvisionState: "available"}
	}
	return out
}

// clock is a settable time for health and timestamps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// rig drives a real engine over the fake Placement, recording into Ops
// as the daemon does.
type rig struct {
	t     *testing.T
	fake  *placementfake.Server
	src   *source
	clock *clock
	ops   *ops.Ops
	eng   *engine.Engine
	extra struct {
		sync.Mutex
		obs engine.Observer // tests' own observer, if any
	}
}

// watch passes the engine's events to obs too.
func (r *rig) watch(obs engine.Observer) { r.extra.Lock(); r.extra.obs = obs; r.extra.Unlock() }

func (r *rig) Observe(e engine.Event) {
	r.extra.Lock()
	obs := r.extra.obs
	r.extra.Unlock()
	if obs != nil {
		obs.Observe(e)
	}
}

func newRig(t *testing.T, nodes int) *rig {
	t.Helper()
	return newRigLogging(t, nodes, slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newRigLogging is newRig with the engine's log handler given.
func newRigLogging(t *testing.T, nodes int, h slog.Handler) *rig {
	t.Helper()
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	c := &clock{t: time.Unix(1_000, 0)}
	o := ops.New(c.now)
	o.Configure(ops.Info{EngineID: "test", Plugin: "fake", Placement: fake.URL(), Auth: "noauth",
		Interval: time.Minute, UnhealthyAfter: 3, History: 10, LoadedAt: c.now()})
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin",
		Observe: o.Metrics.ObservePlacement})
	if err != nil {
		t.Fatal(err)
	}
	src := &source{nodes: fleet(nodes), gone: map[string]bool{}}
	log := slog.New(h)
	rg := &rig{}
	eng := engine.New(ops.TimedSource(src, o.Metrics), pc,
		engine.Policy{OwnerTrait: engine.OwnerTrait("test"), MarkerTraits: []string{"COMPUTE_NODE"}},
		engine.Options{Concurrency: 2, MaxAttempts: 6, DeleteLimit: 0.5, Progress: o.Progress(log, time.Hour), Observer: engine.Observers{o, rg}}, nil, log)
	rg.t, rg.fake, rg.src, rg.clock, rg.ops, rg.eng = t, fake, src, c, o, eng
	return rg
}

// cycle runs one cycle a minute after the last, as the daemon would.
func (r *rig) cycle() engine.Report {
	r.clock.advance(time.Minute)
	start := r.clock.now()
	r.ops.CycleStarted()
	rep := r.eng.Cycle(context.Background())
	r.ops.CycleDone(rep, start)
	return rep
}
