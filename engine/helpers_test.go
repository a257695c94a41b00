package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// source is an in-memory inventory source that records the order of calls.
type source struct {
	mu        sync.Mutex
	nodes     []hostabi.Node
	instances []hostabi.Instance
	gone      map[string]bool // what ConfirmDeleted proves deleted
	failNodes error
	calls     []string
	// duringNodes runs after the node snapshot is taken, before
	// ListNodes returns: an instance landing mid-listing.
	duringNodes func(*source)
}

func (s *source) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	s.mu.Lock()
	s.calls = append(s.calls, "nodes")
	if s.failNodes != nil {
		s.mu.Unlock()
		return nil, s.failNodes
	}
	snap := slices.Clone(s.nodes)
	hook := s.duringNodes
	s.mu.Unlock()
	if hook != nil {
		hook(s)
	}
	return snap, nil
}

func (s *source) ListInstances(context.Context) ([]hostabi.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "instances")
	return slices.Clone(s.instances), nil
}

func (s *source) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range uuids {
		if s.gone[u] {
			deleted = append(deleted, u)
		}
	}
	return deleted, nil, nil
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

type rig struct {
	t      testing.TB
	fake   *placementfake.Server
	src    *source
	pc     *placement.Client
	eng    *engine.Engine
	pol    engine.Policy
	opts   engine.Options
	state  *engine.State
	ownerT string
}

func newRig(t testing.TB, nodes int) *rig {
	t.Helper()
	fake := placementfake.New(placementfake.WithSeed(int64(len(t.Name()))))
	t.Cleanup(fake.Close)
	r := &rig{t: t, fake: fake, src: &source{nodes: fleet(nodes), gone: map[string]bool{}}}
	r.ownerT = engine.OwnerTrait("test")
	r.pol = engine.Policy{OwnerTrait: r.ownerT, MarkerTraits: []string{"COMPUTE_NODE"}}
	r.opts = engine.Options{Concurrency: 4, MaxAttempts: 6, DeleteLimit: 0.5}
	r.state, _ = engine.LoadState("", "")
	r.restart()
	t.Cleanup(r.checkInvariants)
	return r
}

// restart builds a new client and engine, as a new process would, keeping
// the state cache (pass a fresh one to simulate losing it).
func (r *rig) restart() {
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: r.fake.URL(), Token: "admin"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.pc = pc
	r.eng = engine.New(r.src, pc, r.pol, r.opts, r.state, nil)
}

func (r *rig) cycle() engine.Report {
	r.t.Helper()
	return r.eng.Cycle(context.Background())
}

func (r *rig) cleanCycle() engine.Report {
	r.t.Helper()
	rep := r.cycle()
	if len(rep.Errors) > 0 {
		r.t.Fatalf("cycle errors: %v", rep.Errors)
	}
	return rep
}

// checkInvariants holds for every test: no invented generation was ever
// sent, inventory was never cleared with DELETE, allocations never touched.
func (r *rig) checkInvariants() {
	if u := r.fake.SentUnknownGenerations(); len(u) > 0 {
		r.t.Errorf("engine sent generations the server never handed out: %v", u)
	}
	if d := r.fake.Find("DELETE", "/resource_providers/*/inventories"); len(d) > 0 {
		r.t.Errorf("engine used DELETE on inventories: %v", d)
	}
	for _, req := range r.fake.Requests() {
		if strings.HasPrefix(req.Path, "/allocations") && !r.ownHold(req.Path) {
			r.t.Errorf("engine touched allocations: %s %s", req.Method, req.Path)
		}
	}
}

func (r *rig) provider(uuid string) placementfake.ProviderState {
	r.t.Helper()
	p, ok := r.fake.Provider(uuid)
	if !ok {
		r.t.Fatalf("provider %s missing", uuid)
	}
	return p
}

func (r *rig) reserved(uuid string) int64 {
	return r.provider(uuid).Inventories["CUSTOM_BAREMETAL_GOLD"].Reserved
}

func errorsContain(errs []engine.Error, s string) bool {
	return slices.ContainsFunc(errs, func(e engine.Error) bool { return strings.Contains(e.Message, s) })
}

var errBoom = errors.New("ironic answered 503")
