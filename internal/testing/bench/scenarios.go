package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
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
	var cpus, walls []float64
	var reqs int64
	for range 5 {
		m := Measure(ctx, eng)
		cpus, walls, reqs = append(cpus, msOf(m.CPU)), append(walls, msOf(m.Wall)), max(reqs, m.Requests)
	}
	cpu := SpreadOf(cpus)
	goal, ok := cpuGoal(n, cpu.Med)
	rows := []Row{
		{"cold cycle: providers created per second", fleet, fmt.Sprintf("%.0f/s (%s, %d requests)",
			float64(n)/cold.Wall.Seconds(), cold.Wall.Round(time.Millisecond), cold.Requests), "", ""},
		{"Placement requests per idle cycle (max of 5)", fleet, fmt.Sprint(reqs), "≤ 2", verdict(reqs <= 2)},
		{"engine CPU per idle cycle, plugin excluded, ms (min / median / max of 5)", fleet, cpu.Format("%.1f"), goal, ok},
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
