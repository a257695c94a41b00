package bench

import "strings"

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
