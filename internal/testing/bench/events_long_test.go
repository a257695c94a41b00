package bench

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"
)

// burstRun is a burst of notifications and how it drained.
type burstRun struct {
	nodes, messages int
	drained         float64 // s from the publish's end until the last batch synced
	batches         float64
	requests        int
	fullCycles      float64
	timeouts        float64 // plugin calls that ran out of plugin.timeout
}

// burst publishes per notifications a node at once and waits until every
// one is received and synced, with no batch nor node sync for a second.
func (s *scaleRig) burst(per int) burstRun {
	e := s.eng
	r := burstRun{nodes: len(s.uuids)}
	before, c0 := s.counts(), e.metric("rpengine_cycles_total")
	n0, b0, s0 := e.metric("rpengine_events_received_total"), e.metric("rpengine_events_batches_total"), e.metric("rpengine_node_syncs_total")
	t0 := e.metricWith("rpengine_plugin_call_duration_seconds_count", `outcome="timeout"`)
	r.messages = s.publishBurst(per)
	start := time.Now()
	last, stable := -1.0, time.Now()
	waitFor(s.t, 5*time.Minute, "the burst drained", func() bool {
		n := e.metric("rpengine_node_syncs_total") - s0
		if v := e.metric("rpengine_events_batches_total") - b0 + n; v != last {
			last, stable = v, time.Now()
		}
		return e.metric("rpengine_events_received_total")-n0 >= float64(r.messages) && n > 0 && time.Since(stable) > time.Second
	})
	r.drained = stable.Sub(start).Seconds()
	r.batches = e.metric("rpengine_events_batches_total") - b0
	r.requests = sumSince(s.counts(), before)
	r.fullCycles = e.metric("rpengine_cycles_total") - c0
	r.timeouts = e.metricWith("rpengine_plugin_call_duration_seconds_count", `outcome="timeout"`) - t0
	s.t.Logf("burst: %d notifications over %d nodes drained in %.1f s, %.0f batches, %d Ironic requests, %.0f full cycles, %.0f timeouts",
		r.messages, r.nodes, r.drained, r.batches, r.requests, r.fullCycles, r.timeouts)
	return r
}

// longRun is the lag of changes made while a full cycle lists a slow
// Ironic.
type longRun struct {
	pages    int32
	hold     time.Duration
	cycle    float64 // s the slow full cycle took
	lags     []float64
	reverted int // changed nodes the slow cycle set back
}

// longCycle holds each listing page back so that a full cycle lasts at
// least 70 s, asks for one, and makes m class changes 0.5 s apart during
// its listing; each change's lag runs until Placement shows it. After the
// cycle, every changed node must still show its change.
func (s *scaleRig) longCycle(pages float64, m int) longRun {
	r := longRun{hold: time.Duration(float64(70*time.Second) / max(pages, 1))}
	s.held.Store(0)
	s.hold.Store(int64(r.hold))
	defer s.hold.Store(0)
	c0 := s.eng.metric("rpengine_cycles_total")
	start := time.Now()
	if err := s.eng.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		s.t.Fatal(err)
	}
	waitFor(s.t, time.Minute, "the slow listing under way", func() bool { return s.held.Load() >= 1 })
	want := s.changeDuring(m)
	if s.eng.metric("rpengine_cycles_total") != c0 {
		s.t.Fatalf("the slow full cycle ended before the changes were made: the run proves nothing")
	}
	waitFor(s.t, 10*time.Minute, "the slow full cycle", func() bool { return s.eng.metric("rpengine_cycles_total") > c0 })
	r.cycle, r.pages = time.Since(start).Seconds(), s.held.Load()
	for u, c := range want {
		if rc, _, _ := inventoryOf(s.placement, u); rc != c {
			r.reverted++
		}
	}
	r.lags = s.lastLags
	s.t.Logf("long cycle: %d pages held %s each, %.0f s; %d changes, lag p50 %.2f s p99 %.2f s; %d set back",
		r.pages, r.hold, r.cycle, len(r.lags), pct(r.lags, 50), pct(r.lags, 99), r.reverted)
	return r
}

// changeDuring makes m class changes on distinct nodes (not those of
// the change kinds) 0.5 s apart, awaiting each in Placement in the background; it
// returns each node's class as Placement should keep it.
func (s *scaleRig) changeDuring(m int) map[string]string {
	want := map[string]string{}
	lags := make([]float64, m)
	var wg sync.WaitGroup
	for k := range m {
		u := s.uuids[len(changeKinds)+(k*7919)%(len(s.uuids)-len(changeKinds))]
		if _, dup := want[u]; dup {
			continue
		}
		c := "bench-long"
		want[u] = "CUSTOM_BENCH_LONG"
		s.ic.SetResourceClass(s.t, u, c)
		at := time.Now()
		wg.Go(func() {
			for rc, _, _ := inventoryOf(s.placement, u); rc != want[u]; rc, _, _ = inventoryOf(s.placement, u) {
				if time.Since(at) > 5*time.Minute {
					lags[k] = -1
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			lags[k] = time.Since(at).Seconds()
		})
		time.Sleep(500 * time.Millisecond)
	}
	wg.Wait()
	s.lastLags = s.lastLags[:0]
	for _, l := range lags {
		if l != 0 {
			s.lastLags = append(s.lastLags, l)
		}
	}
	return want
}

func writeKinds(b *strings.Builder, n int, rs []kindRun) {
	fmt.Fprintf(b, "Ironic requests per change by kind, %d nodes, probe off (each change awaited in Placement, then 1.5 s for late notifications):\n\n", n)
	fmt.Fprintf(b, "| kind | changes | Ironic requests per change | notifications per change | batches per change | full cycles | lag p50 s | lag max s |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		c := float64(r.changes)
		fmt.Fprintf(b, "| %s | %d | %.2f | %.1f | %.1f | %.0f | %.2f | %.2f |\n", r.name, r.changes,
			float64(r.requests)/c, r.notices/c, r.batches/c, r.fullCycles, pct(r.lags, 50), pct(r.lags, 100))
	}
	fmt.Fprintf(b, "| **all kinds** | | **%.2f** | | | | | |\n\n", meanPerChange(rs))
}

func writeBurst(b *strings.Builder, r burstRun) {
	fmt.Fprintf(b, "Burst: %d notifications over %d nodes (5 a node, synthetic, published at once): drained in %.1f s as %.0f batches, "+
		"%d Ironic requests, %.0f plugin timeouts, %.0f full cycles.\n\n", r.messages, r.nodes, r.drained, r.batches, r.requests, r.timeouts, r.fullCycles)
}

func writeLong(b *strings.Builder, r longRun) {
	fmt.Fprintf(b, "Changes during a long full cycle: each listing page held back %.0f s by a proxy (%d pages, the cycle took %.0f s); "+
		"%d class changes 0.5 s apart during its listing: lag p50 %.2f s, p99 %.2f s, max %.2f s; %d set back by the cycle.\n\n",
		r.hold.Seconds(), r.pages, r.cycle, len(r.lags), pct(r.lags, 50), pct(r.lags, 99), pct(r.lags, 100), r.reverted)
}

// writePerHour gives Ironic requests an hour from the measured costs: the
// periodic engine runs 60 full cycles; the event-driven one 6 (every
// events.full_interval), 240 probes (events.probe_interval 15 s, one
// request each) and the changes at the measured mean per change.
func writePerHour(b *strings.Builder, sizes []int, perCycle map[int]float64, perChange float64) {
	fmt.Fprintf(b, "Ironic requests an hour, from the measured costs above (full cycle at each size, %.2f a change; the probe 1 request every 15 s):\n\n", perChange)
	fmt.Fprintf(b, "| nodes | requests per full cycle | changes an hour | periodic (60 s) | event-driven | node records read, periodic | event-driven |\n|---|---|---|---|---|---|---|\n")
	for _, n := range sizes {
		for _, rate := range []float64{0, 100, 1000} {
			p, e := 60*perCycle[n], 6*perCycle[n]+240+rate*perChange
			fmt.Fprintf(b, "| %d | %.0f | %.0f | %.0f | %.0f | %d | %.0f |\n", n, perCycle[n], rate, p, e, 60*n, 6*float64(n)+240*50+rate)
		}
	}
	b.WriteString("\n")
}
