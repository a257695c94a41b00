package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/faultproxy"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
)

// TestEventScaleBench measures the event path at fleet scale against the
// real Ironic 21.4 (its own notifications on Debian's RabbitMQ) and a real
// Placement: Ironic requests per change by kind, a burst of 5 notifications
// a node, the lag of changes made while a full cycle lists a slow Ironic,
// and Ironic requests per hour, event-driven beside periodic.
// RPBENCH_EVENTS=1 runs it; RPBENCH_EVENTS_SCALE_OUT receives the Markdown.
func TestEventScaleBench(t *testing.T) {
	if os.Getenv("RPBENCH_EVENTS") != "1" {
		t.Skip("RPBENCH_EVENTS unset")
	}
	sizes := envInts(t, "RPBENCH_EVENTS_SCALE_NODES", "1000,10000")
	s := newScaleRig(t)
	s.enroll(sizes[0])
	var b strings.Builder
	s.eng = startLagEngine(t, s.placement, s.proxy.URL(), s.bus, true,
		"timeout = \"600s\"\n", "probe_interval = \"0s\"\n")
	s.settle()
	perCycle := map[int]float64{sizes[0]: s.perCycle()}
	kinds := s.kinds(envInts(t, "RPBENCH_EVENTS_KIND_CHANGES", "10")[0])
	burst := s.burst(5)
	long := s.longCycle(float64(s.pages), envInts(t, "RPBENCH_EVENTS_LONG_CHANGES", "60")[0])
	for _, n := range sizes[1:] {
		s.enroll(n)
		perCycle[n] = s.perCycle()
	}
	writeKinds(&b, sizes[0], kinds)
	writeBurst(&b, burst)
	writeLong(&b, long)
	writePerHour(&b, sizes, perCycle, meanPerChange(kinds))
	t.Log("\n" + b.String())
	if out := os.Getenv("RPBENCH_EVENTS_SCALE_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scaleRig is the real services, and the engine's Ironic behind a proxy
// that counts its requests by kind and can hold the listing's pages back.
type scaleRig struct {
	t         *testing.T
	bus       *rabbittest.Broker
	ic        *ironictest.Client
	proxy     *faultproxy.Proxy
	placement string
	eng       *lagEngine
	uuids     []string
	hold      atomic.Int64 // ns each listing page is held back; 0 none
	slow      atomic.Bool  // every request of the engine held 0.3-1.5 s
	held      atomic.Int32 // listing pages held so far
	mu        sync.Mutex
	requests  map[string]int // by kind: list, read, recent, other
	pages     int            // listing pages of the last perCycle
	lastLags  []float64      // of the last changeDuring
}

func newScaleRig(t *testing.T) *scaleRig {
	s := &scaleRig{t: t, bus: rabbittest.Start(t), requests: map[string]int{}}
	ironicURL := ironictest.StartRealNotifying(t, s.bus.URL)
	s.ic = ironictest.NewClient(t, ironicURL)
	p, err := faultproxy.New(ironicURL, faultproxy.Faults{Hold: s.count})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s.proxy = p
	s.placement = placementtest.StartReal(t)
	return s
}

// count files each request of the engine by kind, and holds the
// listing's pages back while hold is set.
func (s *scaleRig) count(r *http.Request) time.Duration {
	kind := "other"
	switch {
	case r.URL.Path == "/v1/nodes":
		kind = "list"
	case r.URL.Path == "/v1/nodes/detail":
		kind = "recent"
	case strings.HasPrefix(r.URL.Path, "/v1/nodes/"):
		kind = "read"
	}
	s.mu.Lock()
	s.requests[kind]++
	s.mu.Unlock()
	if h := time.Duration(s.hold.Load()); h > 0 && kind == "list" {
		s.held.Add(1)
		return h
	}
	return s.slowness(r)
}

// slowness holds a request 0.3 to 1.5 s while slow is set: each Ironic
// and Placement request as costly as on the loaded machines of the field.
func (s *scaleRig) slowness(*http.Request) time.Duration {
	if !s.slow.Load() {
		return 0
	}
	return 300*time.Millisecond + time.Duration(rand.Int64N(int64(1200*time.Millisecond)))
}

// counts is a copy of the request counts.
func (s *scaleRig) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

func sumSince(now, then map[string]int) int {
	n := 0
	for k, v := range now {
		n += v - then[k]
	}
	return n
}

// enroll brings the fleet to n nodes, four creations at a time; the first
// (one a change kind) are made available (schedulable).
func (s *scaleRig) enroll(n int) {
	start, from := time.Now(), len(s.uuids)
	more := make([]string, n-from)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(more); i += 4 {
				more[i] = s.ic.Create(s.t, ironictest.Spec{Name: fmt.Sprintf("sc-%05d", from+i), ResourceClass: "bench-a"})
			}
		})
	}
	wg.Wait()
	s.uuids = append(s.uuids, more...)
	if from == 0 {
		for _, u := range s.uuids[:len(changeKinds)] {
			s.ic.Available(s.t, u)
		}
	}
	s.t.Logf("enrolled %d nodes in %.0f s", n-from, time.Since(start).Seconds())
}

// settle waits for the first full cycle and the bus's connect cycle.
func (s *scaleRig) settle() {
	waitFor(s.t, 15*time.Minute, "the first full cycle", func() bool { return s.eng.metric("rpengine_cycles_total") >= 1 })
	waitFor(s.t, 15*time.Minute, "the connect's full cycle", func() bool { return s.eng.metric("rpengine_cycles_total") >= 2 })
	time.Sleep(2 * time.Second)
}

// perCycle is the Ironic requests of one full cycle asked for with
// SIGUSR1 (the fleet unchanged), counted from the end of the cycle
// before it, so that no other cycle's requests mix in.
func (s *scaleRig) perCycle() float64 {
	s.quiet()
	s.cycleNow()
	before := s.counts()
	s.cycleNow()
	time.Sleep(time.Second)
	now := s.counts()
	s.pages = now["list"] - before["list"]
	s.t.Logf("full cycle at %d nodes: Ironic requests by kind %v (before %v)", len(s.uuids), now, before)
	return float64(sumSince(now, before))
}

// cycleNow asks for a full cycle and waits for its end.
func (s *scaleRig) cycleNow() {
	c0 := s.eng.metric("rpengine_cycles_total")
	if err := s.eng.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		s.t.Fatal(err)
	}
	waitFor(s.t, 15*time.Minute, "a full cycle", func() bool { return s.eng.metric("rpengine_cycles_total") > c0 })
}

// quiet waits until no batch has come for 3 s (the enrollment's
// notifications synced).
func (s *scaleRig) quiet() {
	last, since := -1.0, time.Now()
	waitFor(s.t, 10*time.Minute, "the bus quiet", func() bool {
		if b := s.eng.metric("rpengine_events_batches_total"); b != last {
			last, since = b, time.Now()
		}
		return time.Since(since) > 3*time.Second
	})
}

// publishBurst sends per notifications for each node of the fleet.
func (s *scaleRig) publishBurst(per int) int {
	kinds := []string{"baremetal.node.maintenance_set.end", "baremetal.node.provision_set.start",
		"baremetal.node.provision_set.end", "baremetal.node.update.end", "baremetal.node.power_set.end"}
	var msgs [][]byte
	for i := range len(s.uuids) * per {
		inner := fmt.Sprintf(`{"priority":"info","event_type":%q,"timestamp":%q,"publisher_id":"ironic-conductor.burst","message_id":"b%d","payload":{"ironic_object.data":{"uuid":%q}}}`,
			kinds[i%len(kinds)], time.Now().UTC().Format("2006-01-02 15:04:05.000000"), i, s.uuids[(i*7)%len(s.uuids)])
		msgs = append(msgs, []byte(fmt.Sprintf(`{"oslo.version":"2.0","oslo.message":%q}`, inner)))
	}
	if err := s.bus.PublishAll(context.Background(), "ironic", "ironic_versioned_notifications.info", msgs); err != nil {
		s.t.Fatal(err)
	}
	return len(msgs)
}
