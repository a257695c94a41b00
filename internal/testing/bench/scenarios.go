package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine"
)

// Row is one figure of the report, with its goal.
type Row struct {
	Metric, Fleet, Value, Goal, Met string
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// Requests measures a cold cycle, idle cycles, and cycles with k changed
// nodes (source changes) and, when bump is set, k drifted providers
// (another writer bumping their generations).
func Requests(ctx context.Context, url string, bump func([]string) error, n int, salt uint32) ([]Row, error) {
	nodes := Fleet(n, salt) // uuids fixed: flip changes only maintenance
	src := source(nodes)
	eng, err := NewEngine(ctx, url, src, 4)
	if err != nil {
		return nil, err
	}
	fleet := fmt.Sprintf("%d (fake)", n)
	cold := Measure(ctx, eng)
	if len(cold.Errors) > 0 {
		return nil, fmt.Errorf("cold cycle at %d: %v", n, cold.Errors[0])
	}
	cpus, walls, floors, reqs, err := idleRounds(ctx, eng, newIdleFloor(url, engine.OwnerTrait("bench")))
	if err != nil {
		return nil, err
	}
	cpu, floor := SpreadOf(cpus), SpreadOf(floors)
	goal, ok := cpuGoal(n, cpu.Med)
	rows := []Row{
		{"cold cycle: providers created per second", fleet, fmt.Sprintf("%.0f/s (%s, %d requests)",
			float64(n)/cold.Wall.Seconds(), cold.Wall.Round(time.Millisecond), cold.Requests), "", ""},
		{"Placement requests per idle cycle (max of 5)", fleet, fmt.Sprint(reqs), "≤ 2", verdict(reqs <= 2)},
		{"engine CPU per idle cycle, plugin excluded, ms (min / median / max of 5)", fleet, cpu.Format("%.1f"), goal, ok},
		floorRow(n, fleet, cpu, floor),
		{"idle cycle wall time, ms (min / median / max of 5)", fleet, SpreadOf(walls).Format("%.1f"), "", ""},
	}
	for _, k := range []int{1, 10, 100} {
		if k > n {
			break
		}
		flip(src, k)
		changed := Measure(ctx, eng)
		rows = append(rows, Row{fmt.Sprintf("requests, %d node(s) changed at the source", k), fleet,
			fmt.Sprint(changed.Requests), fmt.Sprintf("O(k): 1 + k = %d", 1+k), verdict(changed.Requests <= int64(1+k))})
		if bump == nil {
			continue
		}
		if err := bump(UUIDs(nodes[n-k:])); err != nil {
			return nil, err
		}
		drift := Measure(ctx, eng)
		rows = append(rows, Row{fmt.Sprintf("requests, %d provider(s) changed by another writer", k), fleet,
			fmt.Sprint(drift.Requests), fmt.Sprintf("O(k): 1 + 3k = %d", 1+3*k), verdict(drift.Requests <= int64(1+3*k))})
	}
	return rows, nil
}

// idleRounds runs five idle cycles, each followed by the minimal idle
// job (idleFloor), and returns their CPU and wall times (ms) and the most
// requests a cycle sent.
func idleRounds(ctx context.Context, eng *engine.Engine, floor *idleFloor) (cpus, walls, floors []float64, reqs int64, err error) {
	if _, err := floor.run(ctx); err != nil { // learns the generations
		return nil, nil, nil, 0, err
	}
	for range 5 {
		m := Measure(ctx, eng)
		cpus, walls, reqs = append(cpus, msOf(m.CPU)), append(walls, msOf(m.Wall)), max(reqs, m.Requests)
		t := cpuNow()
		if changed, err := floor.run(ctx); err != nil || changed != 0 {
			return nil, nil, nil, 0, fmt.Errorf("minimal idle job: %d providers changed in an idle cycle, %v", changed, err)
		}
		floors = append(floors, msOf(cpuNow()-t))
	}
	return cpus, walls, floors, reqs, nil
}

// floorRow is the idle cycle's CPU against the minimal idle job's, by
// medians of the same rounds; goal ≤ 1.2× at 10k and 100k.
func floorRow(n int, fleet string, cpu, floor Spread) Row {
	r := Row{Metric: "engine CPU per idle cycle / the minimal idle job's (one listing fetched, uuid and generation found, " +
		"compared with the last cycle; medians of 5 interleaved rounds)", Fleet: fleet}
	if floor.Med <= 0 {
		r.Value = "not measured: the minimal job took no measurable CPU"
		return r
	}
	r.Value = fmt.Sprintf("%.2f× (engine %.1f ms, minimal job %s ms)", cpu.Med/floor.Med, cpu.Med, floor.Format("%.1f"))
	if n == 10000 || n == 100000 {
		r.Goal, r.Met = "≤ 1.2×", verdict(cpu.Med <= 1.2*floor.Med)
	}
	return r
}

// ColdRatio compares the engine's cold-start write rate with the bare
// client's against the same Placement. Rounds alternate which goes first,
// since a server gets slower as its database grows.
func ColdRatio(ctx context.Context, url, label string, n, rounds int, salt uint32) (Row, error) {
	var ratios []float64
	var perRound []string
	for r := range rounds {
		var engineWall, bareWall time.Duration
		runEngine := func() error {
			eng, err := NewEngine(ctx, url, source(Fleet(n, salt+uint32(2*r), "baremetal-gold")), 4)
			if err != nil {
				return err
			}
			m := Measure(ctx, eng)
			if len(m.Errors) > 0 {
				return fmt.Errorf("engine cold start: %s", m.Errors[0])
			}
			engineWall = m.Wall
			return nil
		}
		runBare := func() (err error) {
			bareWall, err = BareCreate(ctx, url, UUIDs(Fleet(n, salt+uint32(2*r+1))), "CUSTOM_RPENGINE_OWNER_BENCH", 4)
			return err
		}
		first, second := runEngine, runBare
		if r%2 == 1 {
			first, second = runBare, runEngine
		}
		if err := first(); err != nil {
			return Row{}, err
		}
		if err := second(); err != nil {
			return Row{}, err
		}
		ratios = append(ratios, bareWall.Seconds()/engineWall.Seconds())
		order := "engine first"
		if r%2 == 1 {
			order = "bare first"
		}
		perRound = append(perRound, fmt.Sprintf("%s: engine %.0f/s, bare %.0f/s", order,
			float64(n)/engineWall.Seconds(), float64(n)/bareWall.Seconds()))
	}
	sp := SpreadOf(ratios)
	return Row{fmt.Sprintf("cold start: engine write rate / bare client's at concurrency 4 (min / median / max of %d rounds)", rounds),
		fmt.Sprintf("%d (%s)", n, label), sp.Format("%.2f") + " (" + strings.Join(perRound, "; ") + ")", "≥ 0.90", verdict(sp.Med >= 0.9)}, nil
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuGoal is the ceiling on engine CPU per idle cycle: 100 ms at
// 10k nodes, 400 ms at 100k; other sizes have none.
func cpuGoal(n int, medMS float64) (goal, met string) {
	switch n {
	case 10000:
		return "≤ 100 ms", verdict(medMS <= 100)
	case 100000:
		return "≤ 400 ms", verdict(medMS <= 400)
	}
	return "", ""
}
