package guesttest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Variant is one way of making the same call (the plugin natively, through
// the ABI, in Wasm), timed by Compare.
type Variant struct {
	Name string
	Run  func(tb testing.TB)
}

// Ratio is a figure Compare reports: the median of variant Num over the
// median of variant Den, as metric Name (e.g. "wasm/native").
type Ratio struct{ Name, Num, Den string }

// PluginRatios are the ratios a plugin's listing benchmark reports for
// variants named native, native+abi and wasm: the plugin-call ceilings
// (make bench turns wasm/native and abi/native into its rows).
var PluginRatios = []Ratio{
	{Name: "wasm/native", Num: "wasm", Den: "native"},
	{Name: "abi/native", Num: "native+abi", Den: "native"},
	{Name: "wasm/abi", Num: "wasm", Den: "native+abi"},
}

// Compare runs every variant once per round, rounds times per iteration
// of b, rotating which goes first, so that the machine's load drifts alike
// for all of them; then it reports each variant's median as NAME-ms and
// each ratio of medians. One "op" is all the rounds: read the metrics, not
// ns/op, which Compare zeroes.
func Compare(b *testing.B, rounds int, variants []Variant, ratios []Ratio) {
	b.Helper()
	times := make(map[string][]time.Duration, len(variants))
	for _, v := range variants { // warm up: first calls fill caches and pools
		v.Run(b)
	}
	round := 0
	for b.Loop() {
		for range rounds {
			for i := range variants {
				v := variants[(i+round)%len(variants)]
				start := time.Now()
				v.Run(b)
				times[v.Name] = append(times[v.Name], time.Since(start))
			}
			round++
		}
	}
	med := make(map[string]float64, len(variants))
	for _, v := range variants {
		med[v.Name] = float64(median(times[v.Name]))
		b.ReportMetric(med[v.Name]/1e6, metricName(v.Name)+"-ms")
	}
	for _, r := range ratios {
		b.ReportMetric(med[r.Num]/med[r.Den], r.Name)
	}
	b.ReportMetric(0, "ns/op")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// metricName keeps a unit free of spaces, which the benchmark format
// does not allow.
func metricName(s string) string { return strings.ReplaceAll(s, " ", "_") }
