package ironictest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

// TestRealIronicNotifiesOnRabbitMQ: the real Ironic 21.4, configured by
// StartRealNotifying, publishes a versioned notification for a
// maintenance change on the real RabbitMQ, which the event source
// receives and the Ironic plugin maps to that node.
func TestRealIronicNotifiesOnRabbitMQ(t *testing.T) {
	b := rabbittest.Start(t)
	src, err := events.New(events.Options{URL: b.URL, Queue: "rpengine-notify-test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	url := ironictest.StartRealNotifying(t, b.URL)
	c := ironictest.NewClient(t, url)
	node := c.Create(t, ironictest.Spec{Name: "notify-0", ResourceClass: "baremetal"})
	c.Maintenance(t, node, true)

	deadline := time.After(60 * time.Second)
	var seen []string
	for {
		select {
		case <-deadline:
			t.Fatalf("no maintenance_set notification for %s within 60 s; saw %v\nrabbitmq log:\n%s", node, seen, b.Log())
		case bt := <-src.Batches():
			for _, m := range bt.Messages {
				e, err := ironic.MapEvent(hostabi.EventMessage{Body: string(m.Body), Topic: m.RoutingKey})
				if err != nil {
					t.Fatalf("Ironic's own notification did not map: %v\n%s", err, m.Body)
				}
				seen = append(seen, e.Kind)
				if e.Kind == "baremetal.node.maintenance_set.end" && slices.Equal(e.Nodes, []string{node}) {
					if at, err := time.Parse(time.RFC3339Nano, e.Time); err != nil || time.Since(at) > time.Minute || time.Since(at) < -time.Minute {
						t.Errorf("notification time %q (%v): not within a minute of now", e.Time, err)
					}
					if m.RoutingKey != events.DefaultTopic+".info" {
						t.Errorf("routing key %q", m.RoutingKey)
					}
					t.Logf("notifications seen: %v", seen)
					return
				}
			}
		}
	}
}
