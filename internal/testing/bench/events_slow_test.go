package bench

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/faultproxy"
)

// TestEventSlowServicesBench measures the lag of event-driven changes when
// every Ironic and Placement request of the engine costs 0.3 to 1.5 s (a
// proxy holds each back), as on the loaded machines where the field
// measured p50 10.3 s: 1,000 nodes of the real Ironic 21.4, a real
// Placement, Debian's RabbitMQ. RPBENCH_EVENTS=1 runs it;
// RPBENCH_EVENTS_SLOW_OUT receives the Markdown.
func TestEventSlowServicesBench(t *testing.T) {
	if os.Getenv("RPBENCH_EVENTS") != "1" {
		t.Skip("RPBENCH_EVENTS unset")
	}
	n := envInts(t, "RPBENCH_EVENTS_SLOW_NODES", "1000")[0]
	m := envInts(t, "RPBENCH_EVENTS_SLOW_CHANGES", "40")[0]
	s := newScaleRig(t)
	s.enroll(n)
	pp, err := faultproxy.New(s.placement, faultproxy.Faults{Hold: s.slowness})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pp.Close)
	s.eng = startLagEngine(t, pp.URL(), s.proxy.URL(), s.bus, true, "timeout = \"600s\"\n", "")
	s.settle()
	s.quiet()
	s.slow.Store(true)
	time.Sleep(5 * time.Second)
	c0 := s.eng.metric("rpengine_cycles_total")
	s.changeDuring(m)
	lags := s.lastLags
	full := s.eng.metric("rpengine_cycles_total") - c0
	text := fmt.Sprintf("Every Ironic and Placement request of the engine held 0.3-1.5 s by a proxy (uniform), %d nodes, probe every 15 s: "+
		"%d class changes 0.5 s apart on distinct nodes, lag p50 %.2f s, p99 %.2f s, max %.2f s (%.0f full cycles meanwhile).\n\n",
		n, len(lags), pct(lags, 50), pct(lags, 99), pct(lags, 100), full)
	t.Log(text)
	if os.Getenv("RPBENCH_EVENTS_SLOW_LOG") != "" {
		b, _ := os.ReadFile(s.eng.logPath)
		t.Logf("engine log:\n%s", b)
	}
	if out := os.Getenv("RPBENCH_EVENTS_SLOW_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
