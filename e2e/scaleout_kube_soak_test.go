package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKubeSoakBench: engines coordinating through a real kube-apiserver
// for about 200 cycles each while they join and leave (SIGTERM, kill -9,
// restart), and the API server requests each sends per cycle, phase by
// phase (rpengine_coord_requests_total over rpengine_cycles_total). The
// goal: O(1) per engine and cycle when nothing changes, whatever the
// fleet. RPBENCH_KUBE_SOAK=1 runs it (make bench);
// RPBENCH_KUBE_SOAK_OUT receives the Markdown.
func TestKubeSoakBench(t *testing.T) {
	if os.Getenv("RPBENCH_KUBE_SOAK") != "1" {
		t.Skip("RPBENCH_KUBE_SOAK unset (make bench sets it)")
	}
	r := newKubeScaleRig(t, 0x50a4)
	r.interval, r.metrics = time.Second, map[string]string{}
	per := 40 // cycles a phase; five phases
	phases := []struct {
		name string
		do   func()
		live []int
	}{
		{"three engines start", func() { r.start(1); r.start(2); r.start(3) }, []int{1, 2, 3}},
		{"quiet", func() {}, []int{1, 2, 3}},
		{"engine 3 leaves (SIGTERM), engine 4 joins", func() { r.stop(r.engines[r.id(3)]); r.start(4) }, []int{1, 2, 4}},
		{"engine 2 killed (-9)", func() { r.kill(2) }, []int{1, 4}},
		{"engine 2 and 3 back: four engines", func() { r.start(2); r.start(3) }, []int{1, 2, 3, 4}},
		{"quiet, four engines", func() {}, []int{1, 2, 3, 4}},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| phase | engines | cycles an engine | API requests per engine per cycle: median | max |\n|---|---|---|---|---|\n")
	for _, ph := range phases {
		ph.do()
		before := r.soakSample(ph.live)
		r.waitCycles(ph.live, before, per)
		after := r.soakSample(ph.live)
		var rates []float64
		cycles := 0.0
		for _, n := range ph.live {
			dc := after[n][1] - max(before[n][1], 0)
			rates = append(rates, (after[n][0]-max(before[n][0], 0))/max(dc, 1))
			cycles += dc / float64(len(ph.live))
		}
		slices.Sort(rates)
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.2f | %.2f |\n", ph.name, len(ph.live), cycles, rates[len(rates)/2], rates[len(rates)-1])
	}
	t.Log("\n" + b.String())
	if out := os.Getenv("RPBENCH_KUBE_SOAK_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// soakSample is each live engine's requests to the API server and cycles
// so far (-1 while it does not answer yet).
func (r *scaleRig) soakSample(live []int) map[int][2]float64 {
	out := map[int][2]float64{}
	for _, n := range live {
		url := r.metrics[r.id(n)]
		out[n] = [2]float64{scrapeMetric(url, "rpengine_coord_requests_total"), scrapeMetric(url, "rpengine_cycles_total")}
	}
	return out
}

// waitCycles waits until every live engine has run cycles more cycles
// than in before (an engine that was not answering counts from 0).
func (r *scaleRig) waitCycles(live []int, before map[int][2]float64, cycles int) {
	r.t.Helper()
	deadline := time.Now().Add(time.Duration(cycles) * 5 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		for _, n := range live {
			if scrapeMetric(r.metrics[r.id(n)], "rpengine_cycles_total")-max(before[n][1], 0) < float64(cycles) {
				done = false
			}
		}
		if done {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.t.Fatalf("engines %v: not %d cycles each within %s", live, cycles, time.Duration(cycles)*5*time.Second)
}
