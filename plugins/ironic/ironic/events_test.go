package ironic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// TestReadNodesEqualsListing: a node read alone is exactly the node a
// listing gives, at most one request per node, and a deleted node is
// left out.
func TestReadNodesEqualsListing(t *testing.T) {
	nodes := fakeironic.Generate(20, 7)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{}, nil)
	listed, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hostabi.Node{}
	for _, n := range listed {
		want[n.UUID] = n
	}
	ask := []string{nodes[3].UUID, nodes[11].UUID, strings.ToUpper(nodes[3].UUID), nodes[19].UUID}
	fake.Delete(nodes[19].UUID)
	before := len(fake.Requests())
	got, err := c.ReadNodes(ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d nodes, want 2 (one asked twice, one deleted): %+v", len(got), got)
	}
	for _, n := range got {
		if !reflect.DeepEqual(n, want[n.UUID]) {
			t.Errorf("read node differs from the listing:\n read %+v\n list %+v", n, want[n.UUID])
		}
	}
	if reqs := fake.Requests()[before:]; len(reqs) > 3 {
		t.Errorf("requests for 3 distinct nodes: %d (%v), want at most 3", len(reqs), reqs)
	}
	if _, err := c.ReadNodes([]string{"not-a-uuid"}); err == nil {
		t.Error("a malformed uuid was read")
	}
}

func notification(t *testing.T, eventType, uuid string, envelope bool) string {
	msg := map[string]any{"priority": "info", "event_type": eventType, "timestamp": "2026-12-01 18:00:00.250000",
		"publisher_id": "ironic-api.localhost", "message_id": "m1",
		"payload": map[string]any{"ironic_object.name": "NodePayload", "ironic_object.data": map[string]any{"uuid": uuid}}}
	b, _ := json.Marshal(msg)
	if envelope {
		b, _ = json.Marshal(map[string]string{"oslo.version": "2.0", "oslo.message": string(b)})
	}
	return string(b)
}

func TestMapEvent(t *testing.T) {
	const u = "5a8b3b8e-7f38-4f5c-9c2b-2d1f3d0c6a11"
	for _, env := range []bool{false, true} {
		e, err := MapEvent(hostabi.EventMessage{Body: notification(t, "baremetal.node.maintenance_set.end", strings.ToUpper(u), env)})
		if err != nil || !reflect.DeepEqual(e.Nodes, []string{u}) || e.Time != "2026-12-01T18:00:00.25Z" || e.Kind != "baremetal.node.maintenance_set.end" {
			t.Errorf("envelope=%v: %+v, %v", env, e, err)
		}
	}
	if e, err := MapEvent(hostabi.EventMessage{Body: notification(t, "baremetal.port.create.end", u, true)}); err != nil || len(e.Nodes) != 0 {
		t.Errorf("a port notification mapped to %v, %v; want no node", e.Nodes, err)
	}
	for _, bad := range []string{`not json`, `{"oslo.version":"2.0","oslo.message":"{"}`, `{"payload":{}}`,
		notification(t, "baremetal.node.update.end", "../../etc", false)} {
		if e, err := MapEvent(hostabi.EventMessage{Body: bad}); err == nil {
			t.Errorf("%q mapped without error: %+v", bad, e)
		}
	}
}

// TestReadNodesByListing: past read_by_listing_above distinct nodes, a
// read costs the listing's pages, not one GET per node, and gives the
// same nodes; a deleted node is left out as a 404 would leave it.
func TestReadNodesByListing(t *testing.T) {
	nodes := fakeironic.Generate(250, 7)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{PageSize: 100, ReadByListingAbove: 20}, nil)
	var ask []string
	for i := 0; i < 250; i += 5 {
		ask = append(ask, nodes[i].UUID)
	}
	fake.Delete(nodes[5].UUID)
	alone := map[string]hostabi.Node{}
	for _, u := range ask[:3] {
		got, err := c.ReadNodes([]string{u})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range got {
			alone[n.UUID] = n
		}
	}
	before := len(fake.Requests())
	got, err := c.ReadNodes(ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ask)-1 {
		t.Fatalf("read %d of %d asked (one deleted), want %d", len(got), len(ask), len(ask)-1)
	}
	for _, n := range got {
		if a, ok := alone[n.UUID]; ok && !reflect.DeepEqual(a, n) {
			t.Errorf("node by listing differs from the node read alone:\n %+v\n %+v", n, a)
		}
	}
	if reqs := fake.Requests()[before:]; len(reqs) > 3 {
		t.Errorf("%d requests for %d nodes over 3 pages: %v", len(reqs), len(ask), reqs)
	}
}
