package bench

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"runtime"
	"slices"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// elsewhere lists nodes and answers every proof request: gone nodes
// deleted, the others present (out of the engine's scope).
type elsewhere struct {
	nodes []hostabi.Node
	gone  bool
}

func (s *elsewhere) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return slices.Clone(s.nodes), nil
}

func (s *elsewhere) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }

func (s *elsewhere) ConfirmDeleted(_ context.Context, uuids []string) (deleted, present []string, err error) {
	if s.gone {
		return slices.Clone(uuids), nil, nil
	}
	return nil, slices.Clone(uuids), nil
}

// Unlisted measures an engine that owns n providers whose nodes it no
// longer lists (its scope shrank; the source proves each node present):
// engine CPU, requests and the Go heap per cycle, against the minimal job
// of such a cycle (one provider listing, one batched proof). It returns
// the median CPU for the growth row (GrowthRow).
func Unlisted(ctx context.Context, c *Child, n int, salt uint32) ([]Row, float64, error) {
	if err := c.Seed(n, salt, engine.OwnerTrait("bench")); err != nil {
		return nil, 0, err
	}
	src := &elsewhere{}
	eng, err := NewEngine(ctx, c.URL, src, 4)
	if err != nil {
		return nil, 0, err
	}
	bare, err := placement.New(ctx, placement.Config{Endpoint: c.URL, Token: "admin"})
	if err != nil {
		return nil, 0, err
	}
	var cpus, minimal, heaps []float64
	var reqs int64
	for range 5 {
		m := Measure(ctx, eng)
		if len(m.Errors) > 0 {
			return nil, 0, fmt.Errorf("unlisted cycle at %d: %s", n, m.Errors[0])
		}
		cpus, reqs = append(cpus, msOf(m.CPU)), m.Requests
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heaps = append(heaps, float64(ms.HeapAlloc)/1e6)
		t := cpuNow()
		if err := minimalJob(ctx, bare, src, n); err != nil {
			return nil, 0, err
		}
		minimal = append(minimal, msOf(cpuNow()-t))
	}
	runtime.KeepAlive(eng)
	cpu, min := SpreadOf(cpus), SpreadOf(minimal)
	fleet := fmt.Sprintf("%d unlisted (fake)", n)
	goal, met := "", ""
	if n >= 100000 {
		goal, met = fmt.Sprintf("≤ 2× the minimal job (%.0f ms)", min.Med), verdict(cpu.Med <= 2*min.Med)
	}
	return []Row{
		{"unlisted providers (scope shrank, nodes present elsewhere): engine CPU per cycle, ms (min / median / max of 5)", fleet,
			fmt.Sprintf("%s (%.2f× the minimal job: one listing, one batched proof, %.1f ms)", cpu.Format("%.1f"), cpu.Med/min.Med, min.Med), goal, met},
		{"unlisted providers: Placement requests per cycle", fleet, fmt.Sprint(reqs), "≤ 1", verdict(reqs <= 1)},
		{"unlisted providers: Go heap the engine keeps after the cycle (bench process, after a GC), MB (max of 5; the engine's peak RSS: the `engine once` row where every node is gone)",
			fleet, fmt.Sprintf("%.1f", SpreadOf(heaps).Max), "", ""},
	}, cpu.Med, nil
}

func minimalJob(ctx context.Context, pc *placement.Client, src *elsewhere, n int) error {
	gens, err := pc.ProviderGenerations(ctx, url.Values{"required": {engine.OwnerTrait("bench")}}, n)
	if err != nil {
		return err
	}
	uuids := make([]string, 0, len(gens))
	for u := range gens {
		uuids = append(uuids, u)
	}
	slices.Sort(uuids)
	_, _, err = src.ConfirmDeleted(ctx, uuids)
	return err
}

// GrowthRow is the growth exponent of the unlisted cycle's CPU between
// consecutive sizes, the worst pair: linear is 1, quadratic 2.
func GrowthRow(sizes []int, cpuMS []float64) Row {
	worst := 0.0
	var pairs []string
	for i := 1; i < len(sizes); i++ {
		k := math.Log(cpuMS[i]/cpuMS[i-1]) / math.Log(float64(sizes[i])/float64(sizes[i-1]))
		worst = max(worst, k)
		pairs = append(pairs, fmt.Sprintf("%d→%d: %.2f", sizes[i-1], sizes[i], k))
	}
	return Row{"unlisted providers: growth exponent of engine CPU per cycle (worst pair of sizes; 1 is linear, 2 quadratic)",
		fmt.Sprint(sizes), fmt.Sprintf("%.2f (%s)", worst, joinComma(pairs)), "≤ 1.2", verdict(worst <= 1.2)}
}

func joinComma(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// Unchanged counts the requests of cycles in which nothing changed for n
// providers another engine owns, and for n providers blocked from
// deletion (over engine.delete_limit) and already fully reserved: both
// cost nothing past the listings while their generations hold.
func Unchanged(ctx context.Context, c *Child, n int, salt uint32) ([]Row, error) {
	other := engine.OwnerTrait("bench-other")
	if err := c.Seed(n, salt, other); err != nil {
		return nil, err
	}
	eng, err := NewEngine(ctx, c.URL, &elsewhere{nodes: Fleet(n, salt)}, 4)
	if err != nil {
		return nil, err
	}
	learn := Measure(ctx, eng) // reads each once: another's
	quiet := Measure(ctx, eng)
	if len(quiet.Errors) == 0 {
		return nil, fmt.Errorf("foreign-owned at %d: no error reported", n)
	}
	mine := engine.OwnerTrait("bench-blocked")
	if err := c.Seed(n, salt+1, mine); err != nil {
		return nil, err
	}
	pc, err := placement.New(ctx, placement.Config{Endpoint: c.URL, Token: "admin", MaxConns: 4})
	if err != nil {
		return nil, err
	}
	blocked := engine.New(&elsewhere{gone: true}, pc, engine.Policy{OwnerTrait: mine}, engine.Options{Concurrency: 4}, nil, nil)
	var reserve, after CycleCost
	for range 3 { // first proof; second proof: blocked, reserved; then unchanged
		reserve, after = after, Measure(ctx, blocked)
	}
	fleet := fmt.Sprintf("%d (fake)", n)
	return []Row{
		{"requests per cycle, providers another engine owns, unchanged (first cycle reads each)", fleet,
			fmt.Sprintf("%d (first cycle %d)", quiet.Requests, learn.Requests), "≤ 2: ours, theirs", verdict(quiet.Requests <= 2)},
		{"requests per cycle, providers blocked over engine.delete_limit and reserved, unchanged (the cycle that reserves reads each)", fleet,
			fmt.Sprintf("%d (reserving cycle %d)", after.Requests, reserve.Requests), "≤ 1", verdict(after.Requests <= 1)},
	}, nil
}
