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
}

// ParseGoBench reads `go test -bench` output and returns its metrics in
// the order first seen. The "-N" GOMAXPROCS suffix is dropped; the
// package is the one named by the "ok" line that follows.
func ParseGoBench(r io.Reader) ([]GoMetric, error) {
	var out []GoMetric
	at := map[string]int{}
	sc := bufio.NewScanner(r)
	named := 0 // metrics before this index have their package
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "ok" {
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
				out = append(out, GoMetric{Bench: name, Unit: f[i+1]})
			}
			out[k].Values = append(out[k].Values, v)
		}
	}
	return out, sc.Err()
}

// PluginCeilings turns the ratio metrics the plugin benchmarks report
// (units "wasm/native" and "abi/native") into rows against the plugin-call
// ceilings: the whole call in Wasm ≤ 1.5× native, the ABI's own cost
// ≤ 1.2×.
func PluginCeilings(ms []GoMetric) []Row {
	goals := map[string]float64{"wasm/native": 1.5, "abi/native": 1.2}
	what := map[string]string{
		"wasm/native": "whole plugin call in Wasm / same code native",
		"abi/native":  "ABI's own cost: native+abi / native",
	}
	times := map[string]float64{} // medians of the "-ms" metrics, by bench and unit
	for _, m := range ms {
		if strings.HasSuffix(m.Unit, "-ms") {
			times[m.Pkg+m.Bench+" "+m.Unit] = SpreadOf(m.Values).Med
		}
	}
	var rows []Row
	for _, m := range ms {
		goal, ok := goals[m.Unit]
		if !ok {
			continue
		}
		sp := SpreadOf(m.Values)
		num, den := strings.Replace(strings.Split(m.Unit, "/")[0], "abi", "native+abi", 1), "native"
		value := sp.Format("%.2f") + "×"
		if a, b := times[m.Pkg+m.Bench+" "+num+"-ms"], times[m.Pkg+m.Bench+" "+den+"-ms"]; a > 0 && b > 0 {
			value += fmt.Sprintf(" (medians: %s %.1f ms, %s %.1f ms)", num, a, den, b)
		}
		rows = append(rows, Row{
			Metric: fmt.Sprintf("%s (min / median / max of %d runs)", what[m.Unit], len(m.Values)),
			Fleet:  strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value:  value,
			Goal:   fmt.Sprintf("≤ %.1f×", goal),
			Met:    verdict(sp.Med <= goal),
		})
	}
	return rows
}

// ProofRows turns the Ironic plugin's proof benchmark (unit
// "ironic-requests/call": 10,000 unlisted nodes, all still in Ironic)
// into a row: one GET per node before, now the pages of one uuid-only
// listing.
func ProofRows(ms []GoMetric) []Row {
	var rows []Row
	for _, m := range ms {
		if m.Unit != "ironic-requests/call" {
			continue
		}
		sp := SpreadOf(m.Values)
		rows = append(rows, Row{
			Metric: "Ironic requests to prove 10,000 unlisted nodes of a shrunk scope (one confirm_deleted call; the engine asks again about a node proven present after engine.delete_grace)",
			Fleet:  strings.TrimSpace(m.Pkg + " `" + m.Bench + "`"),
			Value:  sp.Format("%.0f") + " (one GET per node before: 10000)",
			Goal:   "≤ 11: the pages of one listing",
			Met:    verdict(sp.Max <= 11),
		})
	}
	return rows
}
