package engine_test

import (
	"context"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// BenchmarkIdleCycle10k is one cycle with nothing to do at 10,000 nodes.
// The fake Placement runs in this process, so its CPU is included; see
// make bench (cmd/rpbench) for the engine's share alone.
func BenchmarkIdleCycle10k(b *testing.B) {
	fake := placementfake.New()
	defer fake.Close()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	src := &source{nodes: fleet(10000), gone: map[string]bool{}}
	eng := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait("b")}, engine.Options{}, nil, nil)
	if r := eng.Cycle(context.Background()); len(r.Errors) > 0 {
		b.Fatal(r.Errors[0])
	}
	b.ResetTimer()
	for b.Loop() {
		if r := eng.Cycle(context.Background()); r.PlacementRequests != 1 {
			b.Fatalf("idle cycle sent %d requests", r.PlacementRequests)
		}
	}
}

// BenchmarkColdCycle1k creates 1,000 providers from nothing.
func BenchmarkColdCycle1k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		fake := placementfake.New()
		pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
		if err != nil {
			b.Fatal(err)
		}
		src := &source{nodes: fleet(1000), gone: map[string]bool{}}
		eng := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait("b")}, engine.Options{}, nil, nil)
		b.StartTimer()
		if r := eng.Cycle(context.Background()); r.Created != 1000 {
			b.Fatalf("created %d", r.Created)
		}
		b.StopTimer()
		fake.Close()
		b.StartTimer()
	}
}
