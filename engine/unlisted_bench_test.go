package engine_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// fakeSeedEnv asks the fake Placement child for providers that already
// carry an owner marker ("n:TRAIT,..."): an engine owning n providers
// without the minute-long cold cycle that would create them.
const fakeSeedEnv = "RPENGINE_TEST_FAKE_SEED_OWNED"

func seedOwned(fake *placementfake.Server, spec string) error {
	for _, part := range strings.Split(spec, ",") {
		if part == "" {
			continue
		}
		ns, trait, _ := strings.Cut(part, ":")
		n, err := strconv.Atoi(ns)
		if err != nil {
			return fmt.Errorf("%s: %q: %v", fakeSeedEnv, part, err)
		}
		for _, node := range ownedFleet(n, trait) {
			if err := fake.CreateProvider(node.UUID, node.UUID); err != nil {
				return err
			}
			if err := fake.AddTrait(node.UUID, trait); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownedFleet is scaleFleet(n) with uuids of their own for each owner, so
// that fleets of several sizes share one fake.
func ownedFleet(n int, trait string) []hostabi.Node {
	nodes := scaleFleet(n)
	for i := range nodes {
		nodes[i].UUID = fmt.Sprintf("%08x%s", uint32(len(trait)*7919+n), nodes[i].UUID[8:])
	}
	return nodes
}

// outOfScope lists no node and proves every node asked about present:
// the engine's scope shrank, the nodes still exist elsewhere.
type outOfScope struct{}

func (outOfScope) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return nil, nil
}
func (outOfScope) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }
func (outOfScope) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	return nil, slices.Clone(uuids), nil
}

// unlistedCost is one size's cycle and minimal job, engine CPU alone.
type unlistedCost struct {
	cycle, minimal time.Duration
	requests       int64
}

// measureUnlisted runs cycles of an engine owning n providers it does
// not list, and the minimal job of such a cycle: one provider listing
// and one batched proof.
func measureUnlisted(b *testing.B, url string, n, cycles int) unlistedCost {
	ctx := context.Background()
	trait := engine.OwnerTrait("unlisted" + strconv.Itoa(n))
	pc, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin", MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	bare, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin"}) // not counted in the cycle's requests
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(outOfScope{}, pc, engine.Policy{OwnerTrait: trait}, engine.Options{Concurrency: 4}, nil, nil)
	var cyc, minimal []time.Duration
	var reqs int64
	for range cycles {
		t := cpuTime()
		r := eng.Cycle(ctx)
		cyc = append(cyc, cpuTime()-t)
		reqs = r.PlacementRequests // the last: the first also negotiates the microversion
		if len(r.Outcomes) != n || r.Outcomes[0].Reason != engine.ReasonNodePresent {
			b.Fatalf("%d unlisted: %d outcomes, %v", n, len(r.Outcomes), r.ErrorMessages())
		}
		t = cpuTime()
		minimalJob(b, bare, trait, n)
		minimal = append(minimal, cpuTime()-t)
	}
	return unlistedCost{cycle: median(cyc), minimal: median(minimal), requests: reqs}
}

func minimalJob(b *testing.B, pc *placement.Client, trait string, n int) {
	ctx := context.Background()
	gens, err := pc.ProviderGenerations(ctx, url.Values{"required": {trait}}, n)
	if err != nil || len(gens) != n {
		b.Fatalf("listing: %d, %v", len(gens), err)
	}
	uuids := make([]string, 0, len(gens))
	for u := range gens {
		uuids = append(uuids, u)
	}
	slices.Sort(uuids)
	if _, present, _ := (outOfScope{}).ConfirmDeleted(ctx, uuids); len(present) != n {
		b.Fatal("proof")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkUnlisted is a cycle of an engine that owns n providers whose
// nodes it no longer lists (its scope shrank; the plugin proves each node
// present, so each is kept). Engine CPU alone (the fake Placement is a
// child process); x-minimal is the cycle against its minimal job, one
// provider listing and one batched proof (goal at 100k: ≤ 2).
//
//	go test -run '^$' -bench Unlisted -benchtime 3x ./engine
func BenchmarkUnlisted(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			url := fakeChild(b, fmt.Sprintf("%d:%s", n, engine.OwnerTrait("unlisted"+strconv.Itoa(n))))
			b.ResetTimer()
			c := measureUnlisted(b, url, n, b.N)
			b.ReportMetric(float64(c.cycle.Microseconds())/1000, "cpu-ms/cycle")
			b.ReportMetric(float64(c.minimal.Microseconds())/1000, "minimal-cpu-ms")
			b.ReportMetric(c.cycle.Seconds()/c.minimal.Seconds(), "x-minimal")
			b.ReportMetric(float64(c.requests), "requests/cycle")
		})
	}
}

// BenchmarkUnlistedGrowth measures the unlisted cycle at 1k, 10k and
// 100k in one run and fails when its CPU grows faster than N^1.2 between
// two sizes (the goal: linear, or N log N).
//
//	go test -run '^$' -bench UnlistedGrowth -benchtime 1x ./engine
func BenchmarkUnlistedGrowth(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	var seed []string
	for _, n := range sizes {
		seed = append(seed, fmt.Sprintf("%d:%s", n, engine.OwnerTrait("unlisted"+strconv.Itoa(n))))
	}
	url := fakeChild(b, seed...)
	b.ResetTimer()
	for b.Loop() {
		var costs []time.Duration
		for _, n := range sizes {
			costs = append(costs, measureUnlisted(b, url, n, 5).cycle)
		}
		worst := 0.0
		for i := 1; i < len(sizes); i++ {
			worst = max(worst, math.Log(costs[i].Seconds()/costs[i-1].Seconds())/math.Log(float64(sizes[i])/float64(sizes[i-1])))
		}
		b.ReportMetric(worst, "exponent")
		b.ReportMetric(float64(costs[2].Microseconds())/1000, "cpu-ms-100k")
		if worst > 1.2 {
			b.Errorf("unlisted providers: CPU grows as N^%.2f (1k, 10k, 100k: %v), over the goal of 1.2", worst, costs)
		}
	}
}
