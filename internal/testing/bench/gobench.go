package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// GoMetric is one reported metric of one go test benchmark, a value per
// run (-count).
type GoMetric struct {
	Pkg, Bench, Unit string
	Values           []float64
	At, Command      string // from the "# run" line before it (scripts/bench-go.sh)
}

// runMark starts the line scripts/bench-go.sh writes before each go test
// run: "# run 2026-12-04 23:40, load 5.21: go test ...".
const runMark = "# run "

// ParseGoBench reads `go test -bench` output and returns its metrics in
// the order first seen. The "-N" GOMAXPROCS suffix is dropped; the
// package is the one named by the "ok" (or "FAIL") line that follows.
func ParseGoBench(r io.Reader) ([]GoMetric, error) {
	var out []GoMetric
	at := map[string]int{}
	sc := bufio.NewScanner(r)
	named := 0 // metrics before this index have their package
	var when, command string
	for sc.Scan() {
		if mark, ok := strings.CutPrefix(sc.Text(), runMark); ok {
			when, command, _ = strings.Cut(mark, ": ")
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && (f[0] == "ok" || f[0] == "FAIL") {
			for ; named < len(out); named++ {
				out[named].Pkg = strings.TrimPrefix(f[1], "github.com/rpengine/rpengine/")
			}
			continue
		}
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			key := name + " " + f[i+1]
			k, ok := at[key]
			if !ok {
				k, at[key] = len(out), len(out)
				out = append(out, GoMetric{Bench: name, Unit: f[i+1], At: when, Command: command})
			}
			out[k].Values = append(out[k].Values, v)
		}
	}
	return out, sc.Err()
}

// PluginCeilings turns the ratio metrics the plugin benchmarks report
// (units "wasm/native" and "abi/native" of wall times, the same with
// "-cpu" of CPU times) into rows against the plugin-call
// ceilings: the whole call in Wasm ≤ 1.5× native (the VMware plugin's
// ≤ 2×), the ABI's own cost ≤ 1.2×. A benchmark with "wasm" and "native"
// sub-benchmarks and no ratio metric gets its ratio from their ns/op.
// The fake plugin's rows carry no goal: its native listing does no work,
// so the ratio weighs the boundary against nothing.
func PluginCeilings(ms []GoMetric) []Stamped {
	what := map[string]string{
		"wasm/native":     "whole plugin call in Wasm / same code native",
		"abi/native":      "ABI's own cost: native+abi / native",
		"wasm/native-cpu": "whole plugin call in Wasm / same code native, CPU (this process and the plugin host)",
		"abi/native-cpu":  "ABI's own cost: native+abi / native, CPU (this process and the plugin host)",
	}
	times := map[string]float64{} // medians of the "-ms" metrics, by bench and unit
	for _, m := range ms {
		if strings.HasSuffix(m.Unit, "-ms") {
			times[m.Pkg+m.Bench+" "+m.Unit] = SpreadOf(m.Values).Med
		}
	}
	var rows []Stamped
	for _, m := range append(ms, subRatios(ms)...) {
		goal := ceilingGoal(m.Pkg, m.Unit)
		if goal == 0 {
			continue
		}
		sp := SpreadOf(m.Values)
		num, den := strings.Replace(strings.Split(m.Unit, "/")[0], "abi", "native+abi", 1), "native"
		ms := "-ms"
		if strings.HasSuffix(m.Unit, "-cpu") {
			ms = "-cpu-ms"
		}
		value := sp.Format("%.2f") + "×"
		if a, b := times[m.Pkg+m.Bench+" "+num+ms], times[m.Pkg+m.Bench+" "+den+ms]; a > 0 && b > 0 {
			value += fmt.Sprintf(" (medians: %s %.1f ms, %s %.1f ms)", num, a, den, b)
		}
		r := Row{
			Metric: fmt.Sprintf("%s (%s)", what[m.Unit], runs(len(m.Values))),
			Fleet:  strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value:  value,
			Goal:   fmt.Sprintf("≤ %.1f×", goal),
			Met:    verdict(sp.Med <= goal),
		}
		if m.Pkg == "plugins/fake" {
			r.Goal, r.Met = "none: the native side does no work", ""
		}
		rows = append(rows, Stamped{r, m.At, m.Command})
	}
	return rows
}

func runs(n int) string {
	if n == 1 {
		return "one run"
	}
	return fmt.Sprintf("min / median / max of %d runs", n)
}

// ceilingGoal is the plugin-call ceiling for a ratio unit in a package;
// 0 for a unit that is not one.
func ceilingGoal(pkg, unit string) float64 {
	unit = strings.TrimSuffix(unit, "-cpu") // the same ceiling, on CPU time
	switch {
	case unit == "abi/native":
		return 1.2
	case unit == "wasm/native" && pkg == "plugins/vmware":
		return 2
	case unit == "wasm/native":
		return 1.5
	}
	return 0
}

// subRatios are wasm/native metrics made from benchmarks X/wasm and
// X/native (ns/op, one value per run, paired in order) where X is a
// top-level benchmark that reports no wasm/native metric of its own
// (deeper ones, such as the Ironic decoders' parts, are not calls).
func subRatios(ms []GoMetric) []GoMetric {
	ns := map[string][]float64{}
	has := map[string]bool{}
	for _, m := range ms {
		switch {
		case m.Unit == "ns/op":
			ns[m.Pkg+" "+m.Bench] = m.Values
		case m.Unit == "wasm/native":
			has[m.Pkg+" "+m.Bench] = true
		}
	}
	var out []GoMetric
	for _, m := range ms {
		base, ok := strings.CutSuffix(m.Bench, "/wasm")
		if m.Unit != "ns/op" || !ok || strings.Contains(base, "/") || has[m.Pkg+" "+base] {
			continue
		}
		native := ns[m.Pkg+" "+base+"/native"]
		r := GoMetric{Pkg: m.Pkg, Bench: base, Unit: "wasm/native", At: m.At, Command: m.Command}
		for i := 0; i < len(m.Values) && i < len(native); i++ {
			if native[i] > 0 {
				r.Values = append(r.Values, m.Values[i]/native[i])
			}
		}
		if len(r.Values) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Expected are the benchmarks whose rows the report must hold: one
// missing (skipped for want of a service, or failed) becomes a NO row
// saying so, rather than a silent gap.
var Expected = []struct{ Pkg, Bench, Unit, What string }{
	{"plugins/ironic", "BenchmarkListNodes10k", "wasm/native", "Ironic plugin, Wasm / native (≤ 1.5×)"},
	{"plugins/vmware", "BenchmarkList100x20", "wasm/native", "VMware plugin, Wasm / native (≤ 2×)"},
	{"plugins/ironic/ironic", "BenchmarkConfirmDeleted10k", "ironic-requests/call", "Ironic requests per cycle, 10,000 unlisted nodes of a shrunk scope"},
	{"engine", "BenchmarkNodeSync100k", "cpu-ms/sync", "engine CPU to sync one changed node at 100,000 providers"},
	{"engine", "BenchmarkPlanReads1k", "plan-reads", "`engine plan`: Placement reads of providers, cold, 1,000 nodes to create"},
	{"internal/wasmhost", "BenchmarkWarmCompileVMware", "compile-cpu-ms/start", "plugin-host warm start (vmware.wasm)"},
}

// MissingRows are NO rows for the Expected benchmarks ms lacks.
func MissingRows(ms []GoMetric) []Stamped {
	seen := map[string]bool{}
	for _, m := range append(ms, subRatios(ms)...) {
		seen[m.Pkg+" "+strings.Split(m.Bench, "/")[0]+" "+m.Unit] = true
	}
	var rows []Stamped
	for _, e := range Expected {
		if !seen[e.Pkg+" "+e.Bench+" "+e.Unit] {
			rows = append(rows, Stamped{Row: Row{Metric: e.What, Fleet: e.Pkg + " `" + e.Bench + "`",
				Value: "not measured: the benchmark did not report " + e.Unit + " (see its lines in the go test section)", Met: "NO"},
				Command: "scripts/bench-go.sh"})
		}
	}
	return rows
}

// ProofRows turns the Ironic plugin's proof benchmark (unit
// "ironic-requests/call": 10,000 unlisted nodes, all still in Ironic)
// into a row: one GET per node before, now the pages of one uuid-only
// listing.
func ProofRows(ms []GoMetric) []Stamped {
	var rows []Stamped
	for _, m := range ms {
		if m.Unit != "ironic-requests/call" {
			continue
		}
		sp := SpreadOf(m.Values)
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: Row{
			Metric: "Ironic requests per cycle, 10,000 unlisted nodes of a shrunk scope, all still in Ironic: the cycle that asks " +
				"(one confirm_deleted call, the plugin's client natively against the in-repo fake Ironic, plugins/ironic/internal/fakeironic); " +
				"the engine asks again about a node proven present only after engine.delete_grace",
			Fleet: strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value: sp.Format("%.0f") + " (one GET per node before: 10000)",
			Goal:  "≤ 11: the pages of one listing",
			Met:   verdict(sp.Max <= 11),
		}})
	}
	return rows
}
