package engine_test

import (
	"context"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// handOver is a source that hands its nodes over once, as a plugin's
// decoded answer is: the engine holds the only copy.
type handOver struct{ nodes []hostabi.Node }

func (h *handOver) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	n := h.nodes
	h.nodes = nil
	return n, nil
}

func (h *handOver) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }

// BenchmarkColdCycle100k is the cycle that creates 100,000 providers
// from nothing, with a state file, as the cold `engine once` of make
// bench's peak RSS row does (fake Placement in a child process, no
// plugin): peak-live-MB is the largest heap the GC found live,
// peak-heap-MB the largest heap allocated (what the RSS follows). Both
// are the engine's; load moves them little. With -memprofile it says
// what allocates.
//
//	go test -run '^$' -bench ColdCycle100k -benchtime 1x ./engine
func BenchmarkColdCycle100k(b *testing.B) { benchColdCycle(b, 100_000) }

func benchColdCycle(b *testing.B, n int) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		url := fakeChild(b) // a new fleet each round
		state, err := engine.LoadState(filepath.Join(b.TempDir(), "state.json"), "bench")
		if err != nil {
			b.Fatal(err)
		}
		pc, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin", MaxConns: 4})
		if err != nil {
			b.Fatal(err)
		}
		pol := engine.Policy{OwnerTrait: engine.OwnerTrait("cold"), MarkerTraits: []string{"COMPUTE_NODE"}}
		eng := engine.New(&handOver{scaleFleet(n)}, pc, pol, engine.Options{Concurrency: 4}, state, nil)
		runtime.GC()
		stop := sampleHeap()
		b.StartTimer()
		r := eng.Cycle(ctx)
		b.StopTimer()
		live, heap := stop()
		if len(r.Errors) > 0 || r.Created != n {
			b.Fatalf("cold cycle: created %d, %v", r.Created, r.ErrorMessages())
		}
		b.ReportMetric(live/1e6, "peak-live-MB")
		b.ReportMetric(heap/1e6, "peak-heap-MB")
		b.ReportMetric(float64(len(r.Outcomes)), "outcomes")
		b.StartTimer()
	}
}

// sampleHeap samples the live heap (as of the last GC) and the heap
// allocated every 5 ms until stopped, and returns their peaks.
func sampleHeap() (stop func() (live, heap float64)) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	var live, heap uint64
	done, over := make(chan struct{}), sync.WaitGroup{}
	over.Add(1)
	go func() {
		defer over.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			live, heap = max(live, s[0].Value.Uint64()), max(heap, s[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (float64, float64) {
		close(done)
		over.Wait()
		return float64(live), float64(heap)
	}
}
