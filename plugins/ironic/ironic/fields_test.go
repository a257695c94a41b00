package ironic

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// zoned are nodes with an owner, properties and extra of every shape a
// rule meets: strings, a number, a bool, null, an object, absent.
func zoned() []fakeironic.Node {
	return []fakeironic.Node{
		{UUID: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a01", ResourceClass: "gold", ProvisionState: "available", Owner: "p-1",
			Properties: map[string]any{"rack": "r12", "cpus": 64, "capabilities": "boot_mode:uefi"},
			Extra:      map[string]any{"row": "7", "spare": true}},
		{UUID: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a02", ResourceClass: "gold", ProvisionState: "available",
			Properties: map[string]any{"rack": nil}, Extra: map[string]any{"row": map[string]any{"x": 1}}},
		{UUID: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a03", ResourceClass: "gold", ProvisionState: "available"},
	}
}

// The fields asked, and only they, come back: the owner, and each named
// key of properties or extra that has a scalar value (a number or bool as
// its JSON text); Ironic is asked for owner, properties and extra only
// when named.
func TestListNodesOptionalFields(t *testing.T) {
	fake := fakeironic.New(zoned(), 82)
	c := start(t, fake, Config{}, nil)
	req := hostabi.ListNodesRequest{NodeFields: hostabi.NodeFields{Owner: true,
		Properties: []string{"properties.rack", "properties.cpus", "extra.row", "extra.spare", "extra.none"}}}
	got, err := c.ListNodes(req)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"properties.rack": "r12", "properties.cpus": "64", "extra.row": "7", "extra.spare": "true"},
		nil, nil,
	}
	for i, n := range got {
		if !reflect.DeepEqual(n.Properties, want[i]) {
			t.Errorf("node %d: properties %v, want %v", i, n.Properties, want[i])
		}
	}
	if got[0].Owner != "p-1" || got[1].Owner != "" {
		t.Errorf("owners %q %q", got[0].Owner, got[1].Owner)
	}
	last := listRequests(fake.Requests())
	if q := last[len(last)-1]; !strings.Contains(q, ",owner,properties,extra&") {
		t.Errorf("listing %s does not ask for owner, properties and extra", q)
	}

	// Without them: the listing as before, asking Ironic for none of them.
	plain, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].Owner != "" || plain[0].Properties != nil {
		t.Errorf("unasked: %+v", plain[0])
	}
	// Extra alone: properties is not fetched.
	if _, err := c.ListNodes(hostabi.ListNodesRequest{NodeFields: hostabi.NodeFields{Properties: []string{"extra.row"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := listRequests(fake.Requests())
	if q := reqs[len(reqs)-2]; strings.Contains(q, "owner") || strings.Contains(q, "properties") || strings.Contains(q, "extra") {
		t.Errorf("unasked fields requested: %s", q)
	}
	if q := reqs[len(reqs)-1]; !strings.Contains(q, ",extra&") || strings.Contains(q, "properties") {
		t.Errorf("extra alone: %s", q)
	}
}

// A node read (one GET, the recent page, a listing) has the fields a
// listing gives.
func TestReadNodesWithOptionalFields(t *testing.T) {
	nodes := zoned()
	fields := hostabi.NodeFields{Owner: true, Properties: []string{"properties.rack", "extra.row"}}
	for _, cfg := range []Config{{ReadByListingAbove: 20}, {ReadByListingAbove: 1}} {
		c := start(t, fakeironic.New(nodes, 82), cfg, nil)
		listed, err := c.ListNodes(hostabi.ListNodesRequest{NodeFields: fields})
		if err != nil {
			t.Fatal(err)
		}
		for _, ask := range [][]string{{nodes[0].UUID}, {nodes[0].UUID, nodes[1].UUID}} {
			read, err := c.ReadNodesWith(ask, fields)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(read[0], listed[0]) || read[0].Owner != "p-1" {
				t.Fatalf("read (%d asked, by listing above %d) %+v, listed %+v", len(ask), cfg.ReadByListingAbove, read[0], listed[0])
			}
		}
	}
}

// A property name the plugin cannot read, and owner on an Ironic too old
// to have it, fail the listing, naming why.
func TestOptionalFieldsRefused(t *testing.T) {
	c := start(t, fakeironic.New(zoned(), 82), Config{}, nil)
	for _, name := range []string{"rack", "properties.", "driver_info.ipmi_address"} {
		_, err := c.ListNodes(hostabi.ListNodesRequest{NodeFields: hostabi.NodeFields{Properties: []string{name}}})
		if err == nil || !strings.Contains(err.Error(), `reads "properties.<key>" or "extra.<key>"`) {
			t.Errorf("%q: %v", name, err)
		}
	}
	old := start(t, fakeironic.New(zoned(), 49), Config{}, nil)
	_, err := old.ListNodes(hostabi.ListNodesRequest{NodeFields: hostabi.NodeFields{Owner: true}})
	if err == nil || !strings.Contains(err.Error(), "the node owner needs Ironic API 1.50") {
		t.Errorf("owner at 1.49: %v", err)
	}
}
