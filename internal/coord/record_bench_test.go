package coord_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// The etcd cost of the shared record, per cycle, at 1,000 and 10,000
// providers on the in-repo fake Placement and the real etcd:
//
//	go test -run '^$' -bench BenchmarkSharedRecord -benchtime 3x ./internal/coord/
//
// cold: the first cycle (every provider created and recorded); all: a
// change on every node (a trait added or removed fleet-wide); one_pct: a
// change on 1% of the nodes; idle: nothing changed.
func BenchmarkSharedRecord(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("providers=%d", n), func(b *testing.B) { benchSharedRecord(b, n) })
	}
}

func benchSharedRecord(b *testing.B, n int) {
	fake := placementfake.New()
	b.Cleanup(fake.Close)
	etcd := etcdtest.Start(b)
	c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{etcd}, Prefix: "/bench/", Member: "bench",
		OwnerTrait: engine.OwnerTrait("bench"), TTL: ttl})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	src := fleetOf("0bec0000", n)
	eng := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}},
		engine.Options{Concurrency: 16}, nil, nil)
	a, err := c.Sync(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	rec := c.Records(a, "bench")
	eng.ShareRecord(rec, false)
	metrics := map[string]float64{}
	cycle := func(name string, change func()) {
		if change != nil {
			change()
		}
		req0, bytes0 := rec.Stats()
		if rep := eng.Cycle(context.Background()); len(rep.Errors) > 0 {
			b.Fatalf("%s: %v", name, rep.Errors[:1])
		}
		req, bytes := rec.Stats()
		metrics[name+"-etcd-requests"] = float64(req - req0)
		metrics[name+"-etcd-bytes"] = float64(bytes - bytes0)
	}
	cycle("cold", nil)
	for i := 0; b.Loop(); i++ {
		cycle("all", func() { src.setTraits(fmt.Sprintf("CUSTOM_T%d", i%2)) })
		cycle("one_pct", func() { src.setSome(n/100, fmt.Sprintf("CUSTOM_S%d", i%2)) })
		cycle("idle", nil)
	}
	for k, v := range metrics {
		b.ReportMetric(v, k)
	}
}
