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
	cycles := map[string]float64{}
	for _, m := range ms {
		if m.Unit == "cycle-reads" {
			cycles[m.Pkg+" "+m.Bench] = SpreadOf(m.Values).Max
		}
	}
	var rows []Stamped
	for _, m := range ms {
		c, ok := cycles[m.Pkg+" "+m.Bench]
		if m.Unit != "plan-reads" || !ok {
			continue
		}
		p := SpreadOf(m.Values).Max
		met := verdict(p <= c)
		if p > c {
			met += fmt.Sprintf(" by %.0f: the plan's check of each create against every provider's uuid and name needs "+
				"one listing of all providers, which the cycle's owner listing does not carry (the cycle learns a taken name from a refused create)", p-c)
		}
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: Row{
			Metric: "`engine plan`: Placement reads of providers, cold, every node to create (2,001 before: two GETs a provider to create)",
			Fleet:  strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value:  fmt.Sprintf("%.0f (the cycle it predicts: %.0f)", p, c),
			Goal:   "≤ the cycle's reads",
			Met:    met,
		}})
	}
	return rows
}

// WarmStartRows turns internal/wasmhost's BenchmarkWarmCompileVMware
// ("compile-cpu-ms/start" and "trusted-cpu-ms/start") into a row: a warm
// start that re-validates nothing costs about the module's hash and the
// read of its cache entry (goal: at most 1.5 times that).
func WarmStartRows(ms []GoMetric) []Stamped {
	reads := map[string]float64{}
	for _, m := range ms {
		if m.Unit == "trusted-cpu-ms/start" {
			reads[m.Pkg+" "+m.Bench] = SpreadOf(m.Values).Med
		}
	}
	var rows []Stamped
	for _, m := range ms {
		r, ok := reads[m.Pkg+" "+m.Bench]
		if m.Unit != "compile-cpu-ms/start" || !ok {
			continue
		}
		c := SpreadOf(m.Values).Med
		met := verdict(c <= 1.5*r)
		if c > 1.5*r {
			met += ": wazero 1.12 decodes and validates every function before it asks its cache, and no option skips it " +
				"([engine/PROFILE-100k.md](../engine/PROFILE-100k.md) section 12)"
		}
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: Row{
			Metric: "plugin-host warm start: CPU of compiling the module with a warm compilation cache, against a start that trusted its cache (the module's sha256 and a streamed read of its cache entry), ms",
			Fleet:  strings.TrimSpace(m.Pkg + " `" + m.Bench + "` (vmware.wasm, 27 MB)"),
			Value:  fmt.Sprintf("%.0f (trusting the cache: %.0f; %.1f×)", c, r, c/max(r, 0.001)),
			Goal:   "≤ 1.5× trusting the cache: no re-validation of an unchanged compiled module",
			Met:    met,
		}})
	}
	return rows
}
