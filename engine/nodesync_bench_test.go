package engine_test

import (
	"context"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// oneNodeReader reads nodes by uuid from an index, so the bench's source
// costs nothing per node of the fleet (the test source scans them all).
type oneNodeReader struct{ byUUID map[string]*hostabi.Node }

func (r oneNodeReader) ReadNodes(_ context.Context, uuids []string) ([]hostabi.Node, error) {
	var out []hostabi.Node
	for _, u := range uuids {
		if n, ok := r.byUUID[strings.ToLower(u)]; ok {
			out = append(out, *n)
		}
	}
	return out, nil
}

func (oneNodeReader) ReadInstances(context.Context, []string) ([]hostabi.Instance, error) {
	return nil, nil
}

// BenchmarkNodeSync100k is one node sync of one changed node (its class
// flips, so its inventory is written) at 100,000 providers, with the
// state file set and saved after the sync as the daemon saves it
// (internal/ops/daemon): cpu-ms/sync is the engine's CPU for the sync and
// the save, the goal ≤ 5 ms. The fake Placement is a child process; the
// cold cycle that creates the providers first takes about a minute.
//
//	go test -run '^$' -bench NodeSync100k -benchtime 20x ./engine
func BenchmarkNodeSync100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	pc, err := placement.New(ctx, placement.Config{Endpoint: fakeChild(b), Token: "admin", MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	state, err := engine.LoadState(filepath.Join(b.TempDir(), "state.json"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	src := &source{nodes: scaleFleet(n), gone: map[string]bool{}}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}}
	eng := engine.New(src, pc, pol, engine.Options{Concurrency: 4}, state, nil)
	if r := eng.Cycle(ctx); len(r.Errors) > 0 || r.Created != n {
		b.Fatalf("cold cycle: created %d, %v", r.Created, r.ErrorMessages())
	}
	if err := state.Save(); err != nil {
		b.Fatal(err)
	}
	rd := oneNodeReader{byUUID: make(map[string]*hostabi.Node, n)}
	for i := range src.nodes {
		rd.byUUID[strings.ToLower(src.nodes[i].UUID)] = &src.nodes[i]
	}
	var cpu time.Duration
	i := 0
	for b.Loop() {
		node := &src.nodes[(i*7919)%n]
		i++
		node.ResourceClass = map[string]string{"baremetal-gold": "baremetal-silver", "baremetal-silver": "baremetal-gold"}[node.ResourceClass]
		t := cpuTime()
		var r engine.NodeSyncReport
		pprof.Do(ctx, pprof.Labels("phase", "nodesync"), func(ctx context.Context) {
			r = eng.SyncNodes(ctx, rd, []string{node.UUID})
			if err := state.Save(); err != nil {
				b.Fatal(err)
			}
		})
		cpu += cpuTime() - t
		if len(r.Errors) > 0 || len(r.Written) != 1 {
			b.Fatalf("node sync: written %v, errors %v", r.Written, r.ErrorMessages())
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/sync")
}
