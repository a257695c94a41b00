package auth_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/testing/keystonetest"
	"github.com/rpengine/rpengine/internal/testing/memsource"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// BenchmarkQuietCycleRefreshBeforeAboveLifetime is a quiet cycle of 36
// nodes through Keystone when auth.refresh_before (1 h) is above the
// token's lifetime (10 min): logins/op is what the clamp removes.
func BenchmarkQuietCycleRefreshBeforeAboveLifetime(b *testing.B) {
	ks := keystonetest.New()
	defer ks.Close()
	fake := placementfake.New()
	defer fake.Close()
	ks.Mount("placement", "placement", fake)
	ks.SetLifetimes(10 * time.Minute)
	cfg := passwordConfig(ks)
	cfg.RefreshBefore = time.Hour
	s, err := auth.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	endpoint, _ := s.Endpoint("placement")
	ctx := context.Background()
	pc, err := placement.New(ctx, placement.Config{Endpoint: endpoint, Provider: s.Provider()})
	if err != nil {
		b.Fatal(err)
	}
	var nodes []hostabi.Node
	for i := range 36 {
		nodes = append(nodes, hostabi.Node{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), ResourceClass: "gold",
			PowerState: "power on", ProvisionState: "available"})
	}
	eng := engine.New(memsource.New(memsource.State{Nodes: nodes}), pc, engine.Policy{OwnerTrait: engine.OwnerTrait("bench")}, engine.Options{}, nil, nil)
	if r := eng.Cycle(ctx); len(r.Errors) > 0 {
		b.Fatal(r.Errors)
	}
	before := len(ks.Issued())
	b.ResetTimer()
	for b.Loop() {
		if r := eng.Cycle(ctx); len(r.Errors) > 0 || r.PlacementRequests != 1 {
			b.Fatal(r)
		}
	}
	b.ReportMetric(float64(len(ks.Issued())-before)/float64(b.N), "logins/op")
}
