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

// DecodeFloorRow is the listing's decode alone (BenchmarkDecodeProviders
// generations_100k: bytes in memory, every byte checked) against its
// floor on the same bytes (floor_100k: uuid and generation found by
// search), by CPU. It carries no goal: without the fetch both jobs share,
// the ratio is harsher than the idle listing's rows.
func DecodeFloorRow(ms []GoMetric) []Stamped {
	var dec, floor GoMetric
	for _, m := range ms {
		switch {
		case m.Unit != "cpu-ms/op":
		case m.Bench == "BenchmarkDecodeProviders/generations_100k":
			dec = m
		case m.Bench == "BenchmarkDecodeProviders/floor_100k":
			floor = m
		}
	}
	d, f := SpreadOf(dec.Values), SpreadOf(floor.Values)
	if len(dec.Values) == 0 || f.Med <= 0 {
		return nil
	}
	return []Stamped{{At: dec.At, Command: dec.Command, Row: Row{
		Metric: fmt.Sprintf("idle listing decoded from memory / its floor (uuid and generation found by search), CPU (medians of %d runs)", len(dec.Values)),
		Fleet:  "100k providers, " + dec.Pkg + " `BenchmarkDecodeProviders`",
		Value:  fmt.Sprintf("%.2f× (decode %s ms, floor %s ms)", d.Med/f.Med, d.Format("%.1f"), f.Format("%.1f")),
		Goal:   "none: the fetch both share is left out",
	}}}
}
