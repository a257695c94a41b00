package soak

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// The soak's findings, each reduced to the smallest history that shows it,
// so that a fix has a test that is not a 300-cycle run.

// staticSource serves a fixed world and proves nothing deleted.
type staticSource struct{ nodes []hostabi.Node }

func (s staticSource) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return cloneNodes(s.nodes), nil
}
func (s staticSource) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }

func newTestEngine(t *testing.T, fake *placementfake.Server, src engine.Source, state *engine.State) *engine.Engine {
	t.Helper()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	return engine.New(src, pc, newPolicy().Policy, engine.Options{MaxAttempts: 2}, state, nil)
}

func testNodes(n int) []hostabi.Node {
	w := newCloud(1, n)
	out := make([]hostabi.Node, 0, n)
	for _, x := range w.nodes {
		x.Shard = "a"
		out = append(out, x.Node)
	}
	return out
}

// Soak seed 1, cycle 20: after a provider's write gave up on conflicts,
// its cache entry is invalidated (no generation), and State.Save failed on
// every later cycle: "json: error calling MarshalJSON for type
// placement.Generation: placement: no generation to send". The daemon only
// logs that, so the state file silently stopped being written.
func TestStateSavesAfterAWriteGaveUp(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	nodes := testNodes(2)
	state, _ := engine.LoadState(filepath.Join(t.TempDir(), "state.json"), "soak")
	eng := newTestEngine(t, fake, staticSource{nodes}, state)
	if rep := eng.Cycle(context.Background()); len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	nodes[0].Maintenance = true
	eng = newTestEngine(t, fake, staticSource{nodes}, state)
	fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Conflict: true})
	if rep := eng.Cycle(context.Background()); len(rep.Errors) == 0 {
		t.Fatal("endless conflicts must make the write give up")
	}
	if err := state.Save(); err != nil {
		t.Fatalf("state cache not saved after a write gave up: %v", err)
	}
}

// Soak seeds 2 and 3: a class kept because an allocation used it stayed
// forever once the allocation was freed with DELETE /allocations/{c},
// which does not bump the provider's generation (as on the real server):
// the cache said "unchanged", so usages were never read again. Worse, a
// node changed back to its old class stayed fully reserved: a node lost
// to the scheduler.
func TestRetainedClassGoesWhenAForcedDeleteFreesIt(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	nodes := testNodes(1)
	u, consumer := nodes[0].UUID, "c0000000-0000-4000-8000-000000000001"
	nodes[0].ResourceClass = "gold"
	state, _ := engine.LoadState("", "")
	cycle := func() {
		t.Helper()
		eng := newTestEngine(t, fake, staticSource{nodes}, state)
		if rep := eng.Cycle(context.Background()); len(rep.Errors) > 0 {
			t.Fatal(rep.Errors)
		}
	}
	cycle()
	if err := fake.Allocate(consumer, u, map[string]int64{"CUSTOM_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	nodes[0].ResourceClass = "silver"
	cycle()
	if p, _ := fake.Provider(u); p.Inventories["CUSTOM_GOLD"].Reserved != 1 {
		t.Fatalf("old class not kept reserved under its allocation: %+v", p.Inventories)
	}
	if err := newNova(fake.URL()).free(consumer, true); err != nil {
		t.Fatal(err)
	}
	cycle()
	if p, _ := fake.Provider(u); len(p.Inventories) != 1 {
		t.Errorf("old class kept after its allocation was freed: %+v", p.Inventories)
	}
	nodes[0].ResourceClass = "gold"
	cycle()
	if p, _ := fake.Provider(u); p.Inventories["CUSTOM_GOLD"].Reserved != 0 || len(p.Inventories) != 1 {
		t.Errorf("free node back on its old class is not schedulable: %+v", p.Inventories)
	}
}

// Bad-input corpus: the node trait "CUSTOM_" passed the engine's name
// check (^[A-Z0-9_]+$) but Placement refuses it (^CUSTOM_[A-Z0-9_]+$).
// Traits are written before inventory, so the failed PUT /traits/CUSTOM_
// blocked the node's inventory write on every cycle: a node put into
// maintenance stayed schedulable.
func TestTraitPlacementRefusesDoesNotBlockTheReservation(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	nodes := testNodes(1)
	state, _ := engine.LoadState("", "")
	eng := newTestEngine(t, fake, staticSource{nodes}, state)
	eng.Cycle(context.Background())
	nodes[0].Traits, nodes[0].Maintenance = append(nodes[0].Traits, "CUSTOM_"), true
	rep := eng.Cycle(context.Background())
	p, _ := fake.Provider(nodes[0].UUID)
	for rc, inv := range p.Inventories {
		if inv.Reserved != inv.Total {
			t.Errorf("node in maintenance still schedulable: %s %+v (errors %q)", rc, inv, rep.Errors)
		}
	}
}

// proofSource lists nodes and proves deleted the uuids in gone; its
// instance listing can be made to fail.
type proofSource struct {
	nodes         []hostabi.Node
	gone          map[string]bool
	failInstances bool
}

func (s *proofSource) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return cloneNodes(s.nodes), nil
}

func (s *proofSource) ListInstances(context.Context) ([]hostabi.Instance, error) {
	if s.failInstances {
		return nil, errors.New("nova answered 503")
	}
	return nil, nil
}

func (s *proofSource) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	for _, u := range uuids {
		if s.gone[u] {
			deleted = append(deleted, u)
		} else {
			present = append(present, u)
		}
	}
	return deleted, present, nil
}

// A proof of deletion must be of the current deletion: a node proven gone
// once, re-enrolled, then deleted again must be proven gone twice more.
// The first proof's mark survived the re-enrollment when no sync of the
// node succeeded in between (here the instance listing failed), so the
// provider was deleted on one proof of the second deletion.
func TestReenrolledNodeNeedsTwoFreshProofs(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	all := testNodes(12)
	src := &proofSource{nodes: all, gone: map[string]bool{}}
	state, _ := engine.LoadState("", "")
	eng := newTestEngine(t, fake, src, state)
	cycle := func() engine.Report { return eng.Cycle(context.Background()) }
	cycle()
	victim := all[0].UUID
	src.nodes, src.gone[victim] = all[1:], true // deleted
	cycle()                                     // first proof
	src.nodes, src.gone[victim] = all, false    // re-enrolled, same uuid
	src.failInstances = true
	cycle() // listed again, but the cycle ends before any sync
	src.failInstances = false
	src.nodes, src.gone[victim] = all[1:], true // deleted again
	rep := cycle()                              // one proof of this deletion
	if _, ok := fake.Provider(victim); !ok || rep.Deleted > 0 {
		t.Fatalf("provider deleted on one proof of its node's second deletion (report %+v)", rep)
	}
}

// A traits write whose answer was lost (the client timed out, the server
// applied it) left the engine without the record that it added the
// trait: when the node dropped the trait, the provider kept it for ever.
// The same happens when the process dies after the write and before the
// state file is saved (the soak counts those as "former node traits left
// after a crash").
func TestTraitAddedByALostWriteIsStillRemoved(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	nodes := testNodes(1)
	nodes[0].Traits = nil
	state, _ := engine.LoadState("", "")
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(staticSource{nodes}, pc, newPolicy().Policy, engine.Options{MaxAttempts: 1}, state, nil)
	cycle := func() engine.Report { return eng.Cycle(context.Background()) }
	cycle()
	nodes[0].Traits = []string{"CUSTOM_GPU"}
	eng = engine.New(staticSource{nodes}, pc, newPolicy().Policy, engine.Options{MaxAttempts: 1}, state, nil)
	fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/traits", Delay: 300 * time.Millisecond, Times: 1})
	cycle()
	fake.ClearFaults()
	applied := func() bool { p, _ := fake.Provider(nodes[0].UUID); return slices.Contains(p.Traits, "CUSTOM_GPU") }
	for deadline := time.Now().Add(2 * time.Second); !applied() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // the server serves it after the client gave up
	}
	if !applied() {
		t.Skip("the timed-out write was not applied: nothing to show")
	}
	nodes[0].Traits = nil
	eng = engine.New(staticSource{nodes}, pc, newPolicy().Policy, engine.Options{MaxAttempts: 1}, state, nil)
	cycle()
	if p, _ := fake.Provider(nodes[0].UUID); slices.Contains(p.Traits, "CUSTOM_GPU") {
		t.Errorf("the node dropped CUSTOM_GPU, the provider kept it: %v", p.Traits)
	}
}

// Soak seed 20261130 (Wasm, cycle 356; memory runs alike): proofs count
// only in consecutive rounds, but the round count is saved with the state
// file, so a process that died after listing a re-enrolled node (and
// before saving) hands its successor a round that makes the proofs before
// and after the unseen cycle look consecutive. The successor deleted on
// one proof of the node's second deletion. One possible fix: LoadState
// starts at the saved round + 1, since the dead process may have run a
// cycle after its last save.
func TestProofsBeforeACrashDoNotPairWithProofsAfterIt(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	all := testNodes(12)
	src := &proofSource{nodes: all, gone: map[string]bool{}}
	path := filepath.Join(t.TempDir(), "state.json")
	start := func() *engine.Engine {
		state, err := engine.LoadState(path, "soak")
		if err != nil {
			t.Fatal(err)
		}
		return newTestEngine(t, fake, src, state)
	}
	eng := start()
	cycleAndSave := func() engine.Report {
		rep := eng.Cycle(context.Background())
		if err := eng.State().Save(); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	cycleAndSave()
	victim := all[0].UUID
	src.nodes, src.gone[victim] = all[1:], true
	cycleAndSave()                           // first proof, saved
	src.nodes, src.gone[victim] = all, false // re-enrolled
	eng.Cycle(context.Background())          // listed: the proof is void; then the process dies unsaved
	eng = start()
	src.nodes, src.gone[victim] = all[1:], true // deleted again
	rep := eng.Cycle(context.Background())
	if _, ok := fake.Provider(victim); !ok || rep.Deleted > 0 {
		t.Fatalf("deleted on one proof of the node's second deletion after a crash (report %+v)", rep)
	}
}
