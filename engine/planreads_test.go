package engine_test

import (
	"context"
	"strings"
	"testing"
)

// getsOf counts the GET requests of providers Placement received, by
// path and query. The lookups of standard traits are left out: the same
// code in a plan and a cycle, one request each (askTraits).
func getsOf(r *rig) (n int, byPath map[string]int) {
	byPath = map[string]int{}
	for _, q := range r.fake.Requests() {
		if q.Method == "GET" && !strings.HasPrefix(q.Path, "/traits") && !strings.HasPrefix(q.Path, "/resource_classes") {
			n++
			byPath[q.Path+"?"+q.Query]++
		}
	}
	return n, byPath
}

// A cold plan of 1,000 nodes reads Placement's providers twice: the
// cycle's listing of its own, and one listing of every provider, which
// answers each create as Placement would (the uuid or the name taken). It
// used to read each provider it would create twice (by uuid, by name):
// 2,001 reads where the cycle it predicts reads once.
func TestPlanReadsNoMoreThanTheCycle(t *testing.T) {
	planReads, planPaths, cycleReads, cyclePaths := coldPlanThenCycle(t, 1000)
	if planReads > cycleReads+1 || planReads > 2 {
		t.Fatalf("plan read %d times, the cycle %d\nplan %v\ncycle %v", planReads, cycleReads, trim(planPaths), trim(cyclePaths))
	}
	t.Logf("plan %d reads, cycle %d", planReads, cycleReads)
}

// trim keeps the paths read more than once, and a few others.
func trim(m map[string]int) map[string]int {
	out := map[string]int{}
	for p, c := range m {
		if c > 1 || len(out) < 8 {
			out[p] = c
		}
	}
	return out
}

// coldPlanThenCycle plans n new providers, then runs the cycle the plan
// predicts, and returns each one's reads of providers.
func coldPlanThenCycle(t testing.TB, n int) (planReads int, planPaths map[string]int, cycleReads int, cyclePaths map[string]int) {
	r := newRig(t, n)
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	if len(plan.Errors) > 0 || plan.Created != n {
		t.Fatalf("plan: %d to create, errors %v", plan.Created, plan.Errors)
	}
	planReads, planPaths = getsOf(r)
	r.fake.ResetRequests()
	if rep := r.cycle(); rep.Created != n {
		t.Fatalf("cycle created %d", rep.Created)
	}
	cycleReads, cyclePaths = getsOf(r)
	return planReads, planPaths, cycleReads, cyclePaths
}

// BenchmarkPlanReads1k is make bench's row of the test above: a cold
// plan's reads of providers, and those of the cycle it predicts.
func BenchmarkPlanReads1k(b *testing.B) {
	var plan, cyc int
	for b.Loop() {
		plan, _, cyc, _ = coldPlanThenCycle(b, 1000)
	}
	b.ReportMetric(float64(plan), "plan-reads")
	b.ReportMetric(float64(cyc), "cycle-reads")
}
