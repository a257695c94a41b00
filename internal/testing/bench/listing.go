package bench

import (
	"fmt"
	"strings"
)

// ListingRows turns engine/placement's BenchmarkIdleListing into a row a
// size: an idle cycle's listing call (fetch, every byte checked, uuid →
// generation) against the minimal idle job on the same answer (fetch,
// uuid and generation found by searching the bytes, compared with the
// last cycle's), each run's two ns/op paired. Goal ≤ 1.2×.
func ListingRows(ms []GoMetric) []Stamped {
	minimal := map[string]GoMetric{}
	for _, m := range ms {
		if size, ok := strings.CutPrefix(m.Bench, "BenchmarkIdleListing/minimal_"); ok && m.Unit == "ns/op" {
			minimal[size] = m
		}
	}
	var rows []Stamped
	for _, m := range ms {
		size, ok := strings.CutPrefix(m.Bench, "BenchmarkIdleListing/listing_")
		if !ok || m.Unit != "ns/op" || len(minimal[size].Values) == 0 {
			continue
		}
		base := minimal[size].Values
		var ratios []float64
		for i := 0; i < len(m.Values) && i < len(base); i++ {
			ratios = append(ratios, m.Values[i]/base[i])
		}
		sp := SpreadOf(ratios)
		rows = append(rows, Stamped{At: m.At, Command: m.Command, Row: Row{
			Metric: fmt.Sprintf("idle listing: the listing call / the minimal idle job (fetch, uuid and generation found, "+
				"compared with the last cycle), wall (%s)", runs(len(ratios))),
			Fleet: fmt.Sprintf("%s providers, %s `BenchmarkIdleListing`", size, m.Pkg),
			Value: fmt.Sprintf("%s× (medians: listing %.1f ms, minimal %.1f ms)", sp.Format("%.2f"),
				SpreadOf(m.Values).Med/1e6, SpreadOf(base).Med/1e6),
			Goal: "≤ 1.2×",
			Met:  verdict(sp.Med <= 1.2),
		}})
	}
	return rows
}
