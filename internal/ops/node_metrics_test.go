package ops_test

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Quarantines by reason, and deletions pending or blocked, follow the
// cycles' outcomes; no series has an empty label.
func TestOutcomeMetrics(t *testing.T) {
	r := newRig(t, 6)
	h := r.ops.Handler()
	want := func(series string, v float64) {
		t.Helper()
		if got := metric(t, h, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = ""; s.nodes[2].UUID = "not-a-uuid" })
	r.cycle()
	want(`rpengine_nodes_quarantined{reason="no_class"}`, 1)
	want(`rpengine_nodes_quarantined{reason="bad_uuid"}`, 1)
	want(`rpengine_nodes_quarantined{reason="duplicate"}`, 0)

	r.src.set(func(s *source) {
		s.nodes[1].ResourceClass = "baremetal-gold"
		s.nodes[2].UUID = nodeUUID(2)
	})
	r.cycle()
	want(`rpengine_nodes_quarantined{reason="no_class"}`, 0)
	// Four of six gone at once, over the delete limit (half of six): first
	// proofs pending, then, at the second, blocked by the limit.
	r.src.set(func(s *source) {
		for i := 2; i < 6; i++ {
			s.gone[nodeUUID(i)] = true
		}
		s.nodes = s.nodes[:2]
	})
	r.cycle()
	want(`rpengine_deletions_pending`, 4)
	r.cycle()
	want(`rpengine_deletions_pending`, 0)
	want(`rpengine_deletions_blocked{reason="delete_limit"}`, 4)
	want(`rpengine_deletions_blocked{reason="allocations"}`, 0)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if strings.Contains(line, `=""`) && strings.HasPrefix(line, "rpengine_") {
			t.Errorf("empty label: %s", line)
		}
	}
}
