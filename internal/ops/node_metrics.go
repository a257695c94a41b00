package ops

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rpengine/rpengine/engine"
)

// nodeMetrics are the series of the nodes by the last cycle's outcomes:
// quarantined and blocked by reason, deletions pending.
type nodeMetrics struct {
	quarantined *prometheus.GaugeVec // reason
	blocked     *prometheus.GaugeVec // reason
	pending     prometheus.Gauge
	doubt       *prometheus.GaugeVec // reason: quarantined, pending_deletion
}

func (m *Metrics) registerNodes() {
	x := &m.byReason
	x.quarantined = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_nodes_quarantined",
		Help: "Nodes quarantined at the last cycle, by reason code (docs/REPORT.md)."}, []string{"reason"})
	x.blocked = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_deletions_blocked",
		Help: "Providers of nodes proven deleted that the last cycle did not delete, by reason."}, []string{"reason"})
	x.pending = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpengine_deletions_pending",
		Help: "Providers of nodes proven deleted, waiting for their next proof."})
	x.doubt = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpengine_providers_reserved_on_doubt",
		Help: "Providers the last cycle held fully reserved on doubt: of a quarantined node, of a node proven gone once."}, []string{"reason"})
	for _, r := range doubtReasons {
		x.doubt.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{x.quarantined, x.blocked, x.pending, x.doubt} {
		m.reg.MustRegister(c)
	}
	for _, r := range quarantineReasons {
		x.quarantined.WithLabelValues(r)
	}
	for _, r := range blockedReasons {
		x.blocked.WithLabelValues(r)
	}
}

// The label values: fixed sets, so the series exist from the start.
var (
	quarantineReasons = []string{engine.CodeDuplicate, engine.CodeBadUUID, engine.CodeClassAndResources,
		engine.CodeNoClass, engine.CodeBadClass, engine.CodeBadResources, engine.CodeFieldTooLong, engine.CodeTooManyEntries,
		engine.CodeBadUTF8, engine.CodeBadValue}
	blockedReasons = []string{engine.ReasonAllocations, engine.ReasonRefused, engine.ReasonDeleteLimit}
	doubtReasons   = []string{"quarantined", "pending_deletion", "left_scope"}
)

// outcomes sets the per-reason gauges from a cycle's outcomes.
func (m *Metrics) outcomes(os []engine.Outcome) {
	q, b, pending, doubt := map[string]int{}, map[string]int{}, 0, map[string]int{}
	for _, o := range os {
		if slices.Contains(doubtReasons, o.Reserved) {
			doubt[o.Reserved]++
		}
		switch o.Kind {
		case engine.KindQuarantined:
			q[o.Reason]++
		case engine.KindBlocked:
			b[o.Reason]++
		case engine.KindPendingDeletion:
			pending++
		}
	}
	set := func(v *prometheus.GaugeVec, known []string, n map[string]int) {
		for _, r := range known {
			v.WithLabelValues(r).Set(float64(n[r]))
		}
		for r, c := range n {
			if !slices.Contains(known, r) && r != "" {
				v.WithLabelValues(r).Set(float64(c))
			}
		}
	}
	set(m.byReason.quarantined, quarantineReasons, q)
	set(m.byReason.blocked, blockedReasons, b)
	set(m.byReason.doubt, doubtReasons, doubt)
	m.byReason.pending.Set(float64(pending))
}
