package ironic

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/hostabi"
)

// The listing builds its own query (gophercloud's ListOpts cannot say
// shard, sharded=false or conductor_group=""), but every parameter
// ListOpts can express must mean the same as gophercloud's.
func TestQueryAgreesWithGophercloudListOpts(t *testing.T) {
	group := "rack1"
	q := query{group: &group}
	ours := mustQuery(t, q.path(newest, 1000, "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a01"))
	opts := nodes.ListOpts{Fields: nodeFields(newest), Limit: 1000, Marker: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a01",
		SortKey: "id", SortDir: "asc", ConductorGroup: group}
	qs, err := opts.ToNodeListQuery()
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := url.ParseQuery(strings.TrimPrefix(qs, "?"))
	if err != nil {
		t.Fatal(err)
	}
	for k := range theirs {
		if ours.Get(k) != theirs.Get(k) {
			t.Errorf("%s: ours %q, gophercloud %q", k, ours.Get(k), theirs.Get(k))
		}
	}
	if len(ours) != len(theirs) {
		t.Errorf("ours %v\ngophercloud %v", ours, theirs)
	}
}

func TestQueriesCoverTheScopeExactly(t *testing.T) {
	cases := []struct {
		req  hostabi.ListNodesRequest
		want []string
	}{
		{hostabi.ListNodesRequest{}, []string{"all nodes"}},
		{hostabi.ListNodesRequest{Shards: []string{"b", "a", "b"}}, []string{"shard=a,b"}},
		{hostabi.ListNodesRequest{Shards: []string{""}}, []string{"sharded=false"}},
		{hostabi.ListNodesRequest{ConductorGroups: []string{"y", "", "y"}, Shards: []string{"", "s"}},
			[]string{`conductor_group="" shard=s`, `conductor_group="" sharded=false`,
				`conductor_group="y" shard=s`, `conductor_group="y" sharded=false`}},
	}
	for _, c := range cases {
		var got []string
		for _, q := range queries(c.req) {
			got = append(got, q.String())
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%+v: got %q, want %q", c.req, got, c.want)
		}
	}
}

// A real page captured from Ironic 21.4 decodes to what the engine needs.
func TestProjectPageDecodesARealIronicPage(t *testing.T) {
	body, err := os.ReadFile("../internal/fakeironic/testdata/real_page_1.82.json")
	if err != nil {
		t.Fatal(err)
	}
	page, err := ProjectPage(body)
	if err != nil {
		t.Fatal(err)
	}
	got, next := make([]hostabi.Node, page.Len()), page.Next()
	if err := page.Fill(got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(next, "marker=b8ddfa17-e3db-409a-a81e-4ff2544d22dd") {
		t.Fatalf("%d nodes, next %q", len(got), next)
	}
	if n := got[0]; n.PowerState != "power on" || len(n.Traits) != 2 || n.Shard != "shard-a" || n.ConductorGroup != "" {
		t.Errorf("node 0: %+v", n)
	}
	if n := got[1]; n.PowerState != "" || n.InstanceUUID != "11111111-2222-4333-8444-555555555555" || n.ProvisionState != "active" {
		t.Errorf("node 1: %+v", n)
	}
}

// The pager writes exactly the path q.path writes, for every kind of
// query and marker (one needing escapes, one that looks like the
// placeholder).
func TestPagerIsPath(t *testing.T) {
	g, empty := "cg=1&x", ""
	v := version{1, 82}
	for _, q := range []query{{}, {group: &g, shards: []string{"a", "b,c"}}, {group: &empty, unsharded: true}, {uuidOnly: true}} {
		paths := q.pager(v, 1000)
		for _, m := range []string{"", "0d6f3c52-8f5a-4b0e-9b1a-000000000001", "MARKER", "a&marker=MARKER,b c/é"} {
			if got, want := paths(m), q.path(v, 1000, m); got != want {
				t.Errorf("%s, marker %q: pager %s, path %s", q, m, got, want)
			}
		}
	}
}
