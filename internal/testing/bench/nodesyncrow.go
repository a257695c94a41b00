package bench

import (
	"fmt"
	"strings"
)

// NodeSyncRows turns engine/nodesync_bench_test.go's metric (unit
// "cpu-ms/sync": one changed node synced at 100,000 providers, the state
// file saved as the daemon saves it) into a row against its goal: the
// cost of the change, not of the fleet.
func NodeSyncRows(ms []GoMetric) []Stamped {
	var rows []Stamped
	for _, m := range ms {
		if m.Unit != "cpu-ms/sync" {
			continue
		}
		sp := SpreadOf(m.Values)
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: Row{
			Metric: "engine CPU to sync one changed node (events) at 100,000 providers, its write and the state saved " +
				"(the save a journal line, engine/statejournal.go; a whole file rewrite was ~410 ms)",
			Fleet: strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value: sp.Format("%.2f") + " ms",
			Goal:  "≤ 5 ms",
			Met:   verdict(sp.Max <= 5),
		}})
	}
	return rows
}

// PlanReadsRows turns engine/planreads_test.go's metrics (a cold plan of
// 1,000 new providers: "plan-reads", and "cycle-reads" of the cycle it
// predicts) into a row against the goal that a plan reads no more than
// the cycle. The trait lookups are left out: the same code both ways.
func PlanReadsRows(ms []GoMetric) []Stamped {
	return pairedRows(ms, "plan-reads", "cycle-reads", func(s Spread) float64 { return s.Max }, func(p, c float64) Row {
		met := verdict(p <= c)
		if p > c {
			met += fmt.Sprintf(" by %.0f: the plan's check of each create against every provider's uuid and name needs "+
				"one listing of all providers, which the cycle's owner listing does not carry (the cycle learns a taken name from a refused create)", p-c)
		}
		return Row{
			Metric: "`engine plan`: Placement reads of providers, cold, every node to create (2,001 before: two GETs a provider to create)",
			Value:  fmt.Sprintf("%.0f (the cycle it predicts: %.0f)", p, c),
			Goal:   "≤ the cycle's reads",
			Met:    met,
		}
	})
}

// WarmStartRows turns internal/wasmhost's BenchmarkWarmCompileVMware
// ("compile-cpu-ms/start" and "trusted-cpu-ms/start") into a row: a warm
// start that re-validates nothing costs about the module's hash and the
// read of its cache entry (goal: at most 1.5 times that).
func WarmStartRows(ms []GoMetric) []Stamped {
	return pairedRows(ms, "compile-cpu-ms/start", "trusted-cpu-ms/start", func(s Spread) float64 { return s.Med }, func(c, r float64) Row {
		met := verdict(c <= 1.5*r)
		if c > 1.5*r {
			met += ": wazero 1.12 decodes and validates every function before it asks its cache, and no option skips it " +
				"([engine/PROFILE-100k.md](../engine/PROFILE-100k.md) section 12)"
		}
		return Row{
			Metric: "plugin-host warm start: CPU of compiling the module with a warm compilation cache, against a start that trusted its cache (the module's sha256 and a streamed read of its cache entry), ms",
			Value:  fmt.Sprintf("%.0f (trusting the cache: %.0f; %.1f×)", c, r, c/max(r, 0.001)),
			Goal:   "≤ 1.5× trusting the cache: no re-validation of an unchanged compiled module",
			Met:    met,
		}
	})
}

// pairedRows makes one row of each benchmark that reported both unit a
// and unit b, from their values as pick summarises them; the row's fleet
// names the benchmark.
func pairedRows(ms []GoMetric, a, b string, pick func(Spread) float64, row func(va, vb float64) Row) []Stamped {
	bs := map[string]float64{}
	for _, m := range ms {
		if m.Unit == b {
			bs[m.Pkg+" "+m.Bench] = pick(SpreadOf(m.Values))
		}
	}
	var rows []Stamped
	for _, m := range ms {
		vb, ok := bs[m.Pkg+" "+m.Bench]
		if m.Unit != a || !ok {
			continue
		}
		r := row(pick(SpreadOf(m.Values)), vb)
		r.Fleet = strings.TrimSpace(m.Pkg + " `" + m.Bench + "`")
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: r})
	}
	return rows
}
