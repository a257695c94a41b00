package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// TestKillAtEveryRequestLeavesNoLeftovers cuts a cycle dead after its
// n-th request, for every n the cycle makes (create, traits, inventory,
// aggregates, delete), as kill -9 would: nothing after that point is sent
// and nothing the process held in memory survives, only what it put on
// disk. A new process then runs clean cycles, and Placement must equal
// the desired world: no stale trait or aggregate, no unmarked or extra
// provider.
func TestKillAtEveryRequestLeavesNoLeftovers(t *testing.T) {
	total := crashCycle(t, -1, false)
	if total < 10 {
		t.Fatalf("the changing cycle made only %d requests", total)
	}
	for n := 0; n < total; n++ {
		for _, goneAfter := range []bool{false, true} {
			t.Run(fmt.Sprintf("after_%d_requests_gone_%v", n, goneAfter), func(t *testing.T) {
				crashCycle(t, n, goneAfter)
			})
		}
	}
}

const gpu, aggA = "CUSTOM_GPU", "7d1c2a57-1d7b-4d1e-9f3f-0a7b9c1e2d3f"

// crashWorld is the world before (step 0) and after (1) the change the
// crashed cycle was applying, and while the engine is down (2): node 1
// drops the trait the crashed cycle may have added; with goneAfter, the
// new nodes are deleted again.
func crashWorld(step int, goneAfter bool) []hostabi.Node {
	nodes := fleet(6)
	for i := range nodes {
		nodes[i].Traits = []string{gpu}
	}
	if step == 0 {
		return nodes
	}
	nodes[0].Traits = nil                             // loses its GPU
	nodes[1].Traits = []string{gpu, "CUSTOM_NEW"}     // gains a trait
	nodes[2].Maintenance = true                       // reserved
	nodes = slices.Delete(nodes, 3, 4)                // deleted from Ironic
	extra := []hostabi.Node{fleet(8)[6], fleet(8)[7]} // enrolled
	extra[0].Traits, extra[1].Traits = []string{gpu}, []string{"CUSTOM_X"}
	if step == 2 {
		extra[0].Traits = nil
	}
	if goneAfter {
		return nodes
	}
	return append(nodes, extra...)
}

// crashCycle runs the scenario with a kill after n requests of the
// changing cycle (n < 0: no kill) and returns how many requests that
// cycle made.
func crashCycle(t *testing.T, n int, goneAfter bool) int {
	fake := placementfake.New(placementfake.WithSeed(int64(n + 7)))
	t.Cleanup(fake.Close)
	path := filepath.Join(t.TempDir(), "state.json")
	src := &source{nodes: crashWorld(0, false), gone: map[string]bool{}}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("crash"), MarkerTraits: []string{"COMPUTE_NODE"}, Aggregates: []string{aggA}}
	opts := engine.Options{Concurrency: 1 + rand.IntN(3), MaxAttempts: 3, DeleteLimit: 0.5}
	process := func() *engine.Engine {
		st, err := engine.LoadState(path, "k")
		if err != nil {
			t.Fatal(err)
		}
		pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin", MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		return engine.New(src, pc, pol, opts, st, nil)
	}
	clean := func(e *engine.Engine) engine.Report {
		rep := e.Cycle(context.Background())
		if err := e.State().Save(); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := clean(process()); len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	src.set(func(s *source) { s.nodes = crashWorld(1, false); s.gone[nodeUUID(3)] = true })
	e := process()
	fake.ResetRequests()
	if n >= 0 {
		fake.Inject(placementfake.Fault{After: n, Drop: true})
	}
	e.Cycle(context.Background()) // no Save: killed
	made := len(fake.Requests())
	fake.ClearFaults()
	if n < 0 {
		return made
	}
	src.set(func(s *source) {
		s.nodes = crashWorld(2, goneAfter)
		if goneAfter {
			s.gone[nodeUUID(6)], s.gone[nodeUUID(7)] = true, true
		}
	})
	e = process()
	for range 3 { // the deletions need two proofs in consecutive cycles
		clean(e)
	}
	if rep := clean(e); len(rep.Errors) > 0 || rep.Updated+rep.Created+rep.Deleted > 0 {
		t.Fatalf("not converged: %+v", rep)
	}
	checkWorld(t, fake, src, pol)
	return made
}

// checkWorld compares every provider in Placement with the desired world.
func checkWorld(t *testing.T, fake *placementfake.Server, src *source, pol engine.Policy) {
	t.Helper()
	desired, _ := engine.DesiredState(src.nodes, nil, pol)
	want := map[string]engine.Desired{}
	for _, d := range desired {
		want[d.UUID] = d
	}
	uuids := fake.ProviderUUIDs()
	for _, u := range uuids {
		p, _ := fake.Provider(u)
		d, ok := want[p.UUID]
		if !ok {
			t.Errorf("extra provider %s (traits %v)", p.UUID, p.Traits)
			continue
		}
		if !slices.Equal(sorted(p.Traits), sorted(d.Traits)) {
			t.Errorf("provider %s traits %v, want %v", p.UUID, p.Traits, d.Traits)
		}
		if !slices.Equal(sorted(p.Aggregates), sorted(d.Aggregates)) {
			t.Errorf("provider %s aggregates %v, want %v", p.UUID, p.Aggregates, d.Aggregates)
		}
		for rc, inv := range d.Inventory {
			if got := p.Inventories[rc]; got.Reserved != inv.Reserved || got.Total != inv.Total {
				t.Errorf("provider %s %s %+v, want %+v", p.UUID, rc, got, inv)
			}
		}
	}
	if len(uuids) != len(want) {
		t.Errorf("%d providers, want %d", len(uuids), len(want))
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
