package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/faultproxy"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// One change in flight, as a loaded machine delivers it: six
// notifications about one node 250 ms apart, each in a window of its
// own (real RabbitMQ, Ironic and Placement). With events.node_cooldown
// (1 s) the node is read at once, then once a second for what came
// meanwhile, not six times; and the last state, set in Ironic just
// before the last notification, still reaches Placement (the deferred
// read is not dropped).
func TestEventsCooldownSpacesReadsE2E(t *testing.T) {
	var reads atomic.Int32 // the engine's node reads (not its version negotiation)
	r := newEventRigVia(t, func(target string) string {
		p, err := faultproxy.New(target, faultproxy.Faults{Hold: func(r *http.Request) time.Duration {
			if strings.HasPrefix(r.URL.Path, "/v1/nodes/") {
				reads.Add(1)
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p.URL()
	}, `probe_interval = "0s"`)
	direct := ironictest.NewClient(t, r.ironicURL) // the test's own calls, not counted
	u := direct.Create(t, ironictest.Spec{Name: "cool-" + r.id, ResourceClass: "baremetal"})
	direct.Available(t, u)
	r.start()
	r.within(60*time.Second, "bus connected, the connect's full cycle done, the node schedulable", func() bool {
		return r.metric("rpengine_events_connected") == 1 && r.cycles() >= 2 && r.reserved(u) == 0
	})
	time.Sleep(4 * time.Second)
	before := reads.Load()
	kinds := []string{"baremetal.node.provision_set.start", "baremetal.node.provision_set.success",
		"baremetal.node.power_set.end", "baremetal.node.provision_set.success", "baremetal.node.update.end",
		"baremetal.node.maintenance_set.end"}
	for i, k := range kinds {
		if i == len(kinds)-1 {
			direct.Maintenance(t, u, true)
		}
		if err := r.bus.PublishAll(context.Background(), "ironic", "ironic_versioned_notifications.info",
			[][]byte{notification(k, fmt.Sprintf("c%d", i), u)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := r.within(10*time.Second, "the last state (maintenance) in Placement", func() bool { return r.reserved(u) == 1 })
	time.Sleep(2 * time.Second) // any read still due
	n := reads.Load() - before
	if d := r.metric("rpengine_events_deferred_total"); d < 1 {
		t.Errorf("rpengine_events_deferred_total %v: no node waited for its cooldown", d)
	}
	// At most one read a second over about 1.5 s (and Ironic's own
	// maintenance notifications): 0, 1 and 2 s.
	if n > 3 {
		t.Errorf("%d reads of the node for %d notifications about it 250 ms apart; want at most 3 (one a second)", n, len(kinds))
	}
	t.Logf("FIGURE %d notifications about one node 250 ms apart: %d reads of it; the last state in Placement %.2f s after its notification",
		len(kinds), n, took.Seconds())
}
