package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/faultproxy"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// A burst of notifications, against the real Ironic, RabbitMQ and
// Placement, at the field's scale (5,000 messages over 1,000 nodes): it
// drains within 30 s with no plugin timeout and
// no full cycle, and a batch of many nodes costs Ironic a listing, not a
// request per node (the Ironic plugin's read_by_listing_above).
func TestEventsBurstDrainsE2E(t *testing.T) {
	const nodeCount, perNode = 1000, 5
	var proxy *faultproxy.Proxy
	r := newEventRigVia(t, func(target string) string {
		p, err := faultproxy.New(target, faultproxy.Faults{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		proxy = p
		return p.URL()
	})
	ns := createNodes(t, r.ironic, nodeCount, "bu-"+r.id, "baremetal")
	r.start()
	r.within(3*time.Minute, "every node's provider", func() bool { return r.reserved(ns[len(ns)-1]) >= 0 && r.reserved(ns[0]) >= 0 })
	r.within(60*time.Second, "bus connected and the connect's full cycle done", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2
	})
	time.Sleep(4 * time.Second)
	cycles, batches, syncs := r.cycles(), r.metric("rpengine_events_batches_total"), r.metric("rpengine_node_syncs_total")
	received := r.metric("rpengine_events_received_total")
	ironicBefore, _ := proxy.Requests()
	kinds := []string{"baremetal.node.maintenance_set.end", "baremetal.node.provision_set.start",
		"baremetal.node.provision_set.end", "baremetal.node.update.end", "baremetal.node.power_set.end"}
	var msgs [][]byte
	for i := range nodeCount * perNode {
		msgs = append(msgs, notification(kinds[i%len(kinds)], fmt.Sprintf("m%d", i), ns[(i*7)%nodeCount]))
	}
	if err := r.bus.PublishAll(context.Background(), "ironic", "ironic_versioned_notifications.info", msgs); err != nil {
		t.Fatal(err)
	}
	// Drained: every message received, at least one node sync, and no
	// new batch nor node sync for a second (past events.window).
	last, stableSince := -1.0, time.Time{}
	took := r.within(30*time.Second, "the burst drained", func() bool {
		s := r.metric("rpengine_node_syncs_total") - syncs
		if v := r.metric("rpengine_events_batches_total") - batches + s; v != last {
			last, stableSince = v, time.Now()
		}
		return r.metric("rpengine_events_received_total")-received >= float64(len(msgs)) && s > 0 &&
			time.Since(stableSince) > time.Second
	}) - time.Second
	nb := r.metric("rpengine_events_batches_total") - batches
	ironicAfter, _ := proxy.Requests()
	if n := countLines(r.logPath, "timed out") + countLines(r.logPath, "deadline exceeded"); n > 0 {
		t.Errorf("%d timeouts in the log during the burst", n)
	}
	if c := r.cycles(); c != cycles {
		t.Errorf("%v full cycles during the burst: the node syncs were to carry it", c-cycles)
	}
	if per := float64(ironicAfter-ironicBefore) / nb; per > 3 {
		t.Errorf("%d Ironic requests for %v batches (%.1f a batch): a batch was read a node at a time", ironicAfter-ironicBefore, nb, per)
	}
	t.Logf("FIGURE burst of %d notifications over %d nodes drained in %.1f s: %v batches, %d Ironic requests",
		len(msgs), nodeCount, took.Seconds(), nb, ironicAfter-ironicBefore)
}

// notification is one of Ironic's versioned notifications about node u,
// in oslo.messaging's envelope, stamped now.
func notification(kind, id, u string) []byte {
	inner := fmt.Sprintf(`{"priority":"info","event_type":%q,"timestamp":%q,"publisher_id":"ironic-conductor.test","message_id":%q,"payload":{"ironic_object.data":{"uuid":%q}}}`,
		kind, time.Now().UTC().Format("2006-01-02 15:04:05.000000"), id, u)
	return []byte(fmt.Sprintf(`{"oslo.version":"2.0","oslo.message":%q}`, inner))
}

// createNodes enrolls n nodes of class, eight at a time, named prefix-i.
func createNodes(t *testing.T, c *ironictest.Client, n int, prefix, class string) []string {
	out := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				out[i] = c.Create(t, ironictest.Spec{Name: fmt.Sprintf("%s-%d", prefix, i), ResourceClass: class})
			}
		})
	}
	wg.Wait()
	if slices.Contains(out, "") { // a create failed (reported by Create)
		t.FailNow()
	}
	return out
}
