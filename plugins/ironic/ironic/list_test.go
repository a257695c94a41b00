package ironic

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

func TestListNodesMapsIronicFields(t *testing.T) {
	in := []fakeironic.Node{
		{UUID: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a01", Name: "bm-1", ResourceClass: "baremetal-gold",
			ProvisionState: "active", PowerState: "power on", InstanceUUID: "3f1b6c0e-2d5f-4a43-9d3e-0f3c9b2d7e11",
			Shard: "shard-a", Traits: []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}},
		{UUID: "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a02", ProvisionState: "cleaning", TargetProvisionState: "available",
			Maintenance: true, Fault: "clean failure", Retired: true, ConductorGroup: "rack1"},
	}
	c := start(t, fakeironic.New(in, 82), Config{}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []hostabi.Node{
		{UUID: in[0].UUID, Name: "bm-1", ResourceClass: "baremetal-gold", ProvisionState: "active",
			PowerState: "power on", InstanceUUID: in[0].InstanceUUID, Shard: "shard-a",
			Traits: []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}},
		{UUID: in[1].UUID, ProvisionState: "cleaning", TargetProvisionState: "available", Maintenance: true,
			Fault: "clean failure", Retired: true, ConductorGroup: "rack1", Traits: []string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestListNodesPagesWithItsOwnFilters(t *testing.T) {
	nodes := fakeironic.Generate(95, 1)
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{PageSize: 10}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{Shards: []string{"shard-3"}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range nodes {
		if n.Shard == "shard-3" {
			want = append(want, n.UUID)
		}
	}
	if ids := nodeUUIDs(got); !slices.Equal(ids, want) || len(want) < 11 {
		t.Fatalf("got %d nodes %v, want %d %v", len(ids), ids, len(want), want)
	}
	reqs := listRequests(fake.Requests())
	if len(reqs) != 2 {
		t.Fatalf("requests %v, want 2 pages", reqs)
	}
	for i, r := range reqs {
		q := mustQuery(t, r)
		if q.Get("shard") != "shard-3" || q.Get("limit") != "10" || q.Get("sort_key") != "id" {
			t.Errorf("request %d %s lacks the filter, limit or sort", i, r)
		}
		if i > 0 && q.Get("marker") != want[9] {
			t.Errorf("request %d marker %q, want the last uuid of page 1 %s", i, q.Get("marker"), want[9])
		}
	}
}

func TestListNodesSurvivesAServerCapBelowThePageSize(t *testing.T) {
	nodes := fakeironic.Generate(10, 2)
	fake := fakeironic.New(nodes, 82)
	fake.SetMaxLimit(3)
	c := start(t, fake, Config{PageSize: 5}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil || len(got) != 10 {
		t.Fatalf("got %d nodes, err %v; want all 10", len(got), err)
	}
}

// A failed page fails the whole listing: a part must never look like the
// whole (and the nodes left out like deleted ones).
func TestListNodesFailsWholeOnAnyPageError(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter){
		"503":       func(w http.ResponseWriter) { w.WriteHeader(503); w.Write([]byte(`{"error_message": "busy"}`)) },
		"truncated": func(w http.ResponseWriter) { versionHeaders(w); w.Write([]byte(`{"nodes": [{"uuid": "x"`)) },
		"no uuid":   func(w http.ResponseWriter) { versionHeaders(w); w.Write([]byte(`{"nodes": [{"name": "x"}]}`)) },
		"empty uuid": func(w http.ResponseWriter) {
			versionHeaders(w)
			w.Write([]byte(`{"nodes": [{"uuid": ""}, {"uuid": "8a3e45a1-7c61-4bd4-9a39-64e3a1ad6a01"}]}`))
		},
		"not nodes": func(w http.ResponseWriter) { versionHeaders(w); w.Write([]byte(`{"servers": []}`)) },
		"bad type": func(w http.ResponseWriter) {
			versionHeaders(w)
			w.Write([]byte(`{"nodes": [{"uuid": "x", "maintenance": "no"}]}`))
		},
		"stale version": func(w http.ResponseWriter) {
			w.Header().Set("X-OpenStack-Ironic-API-Version", "1.1")
			w.Write([]byte(`{"nodes": []}`))
		},
		"marker 404 on page 1": func(w http.ResponseWriter) { w.WriteHeader(404) },
	}
	for name, fault := range cases {
		t.Run(name, func(t *testing.T) {
			fake := fakeironic.New(fakeironic.Generate(25, 3), 82)
			failOn := 2
			if strings.Contains(name, "page 1") {
				failOn = 1
			}
			fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == failOn {
					fault(w)
					return true
				}
				return false
			}
			c := start(t, fake, Config{PageSize: 10}, nil)
			got, err := c.ListNodes(hostabi.ListNodesRequest{})
			if err == nil || got != nil {
				t.Fatalf("got %d nodes, err %v; want an error and no nodes", len(got), err)
			}
			t.Log(err)
		})
	}
}

func versionHeaders(w http.ResponseWriter) {
	w.Header().Set("X-OpenStack-Ironic-API-Version", "1.82")
}

func TestListNodesRestartsWhenTheMarkerIsDeleted(t *testing.T) {
	nodes := fakeironic.Generate(25, 4)
	fake := fakeironic.New(nodes, 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 { // between pages 1 and 2, the marker node goes away
			fake.Delete(r.URL.Query().Get("marker"))
		}
		return false
	}
	c := start(t, fake, Config{PageSize: 10, MaxRestarts: 3}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Delete(uuids(nodes), 9, 10)
	if !slices.Equal(nodeUUIDs(got), want) {
		t.Fatalf("got %v\nwant %v", nodeUUIDs(got), want)
	}
	if reqs := listRequests(fake.Requests()); len(reqs) != 2+3 {
		t.Fatalf("%d requests, want 2 (404) + 3 (restart): %v", len(reqs), reqs)
	}
}

func TestListNodesGivesUpAfterMaxRestarts(t *testing.T) {
	fake := fakeironic.New(fakeironic.Generate(50, 5), 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if m := r.URL.Query().Get("marker"); m != "" {
			fake.Delete(m) // churn faster than the listing
		}
		return false
	}
	c := start(t, fake, Config{PageSize: 10, MaxRestarts: 2}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err == nil || got != nil || !strings.Contains(err.Error(), "3 time(s) in a row") {
		t.Fatalf("got %d nodes, err %v", len(got), err)
	}
}

func TestListNodesReportsANodeSeenTwiceOnce(t *testing.T) {
	nodes := fakeironic.Generate(25, 6)
	fake := fakeironic.New(nodes, 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 { // the server's page 2 overlaps page 1 by two nodes
			q := r.URL.Query()
			q.Set("marker", nodes[7].UUID)
			r.URL.RawQuery = q.Encode()
		}
		return false
	}
	c := start(t, fake, Config{PageSize: 10}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nodeUUIDs(got), uuids(nodes)) {
		t.Fatalf("got %d nodes %v, want each of the 25 once", len(got), nodeUUIDs(got))
	}
}

func TestListNodesKeepsTheLastSeenDataOfANodeThatMovedGroups(t *testing.T) {
	nodes := fakeironic.Generate(4, 7)
	for i := range nodes {
		nodes[i].ConductorGroup = "a"
	}
	fake := fakeironic.New(nodes, 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 { // after group a was listed, node 0 moves to group b
			fake.Delete(nodes[0].UUID)
			moved := nodes[0]
			moved.ConductorGroup = "b"
			fake.Insert(0, moved)
		}
		return false
	}
	c := start(t, fake, Config{}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{ConductorGroups: []string{"b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].UUID != nodes[0].UUID || got[0].ConductorGroup != "b" {
		t.Fatalf("got %+v", got)
	}
}

func TestListNodesSplitsScopeIntoExactFilters(t *testing.T) {
	nodes := fakeironic.Generate(12, 8)
	nodes[0].Shard, nodes[1].Shard = "", ""
	nodes[2].ConductorGroup = "rack1"
	fake := fakeironic.New(nodes, 82)
	c := start(t, fake, Config{}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{Shards: []string{"", "shard-3", "shard-5"}, ConductorGroups: []string{""}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range nodes {
		if n.ConductorGroup == "" && (n.Shard == "" || n.Shard == "shard-3" || n.Shard == "shard-5") {
			want = append(want, n.UUID)
		}
	}
	slices.Sort(want)
	ids := nodeUUIDs(got)
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("got %v, want %v", ids, want)
	}
	var queries []string
	for _, r := range listRequests(fake.Requests()) {
		q := mustQuery(t, r)
		if _, ok := q["conductor_group"]; !ok || q.Get("conductor_group") != "" {
			t.Errorf("%s: want conductor_group= (the default group)", r)
		}
		queries = append(queries, "shard="+q.Get("shard")+" sharded="+q.Get("sharded"))
	}
	if !slices.Equal(queries, []string{"shard=shard-3,shard-5 sharded=", "shard= sharded=false"}) {
		t.Fatalf("queries %v", queries)
	}
}

func TestListNodesRefusesAFilterTheServerLacks(t *testing.T) {
	fake := fakeironic.New(fakeironic.Generate(3, 9), 81)
	c := start(t, fake, Config{}, nil)
	got, err := c.ListNodes(hostabi.ListNodesRequest{Shards: []string{"shard-1"}})
	if err == nil || got != nil || !strings.Contains(err.Error(), "refusing to list rather than widen the scope") {
		t.Fatalf("got %d nodes, err %v", len(got), err)
	}
	if reqs := listRequests(fake.Requests()); len(reqs) != 0 {
		t.Fatalf("listed anyway: %v", reqs)
	}
	// Without a shard filter the same server is fine; shard is not asked.
	got, err = c.ListNodes(hostabi.ListNodesRequest{})
	if err != nil || len(got) != 3 {
		t.Fatalf("unfiltered: %d nodes, %v", len(got), err)
	}
	if f := mustQuery(t, listRequests(fake.Requests())[0]).Get("fields"); strings.Contains(f, "shard") {
		t.Fatalf("fields %s at 1.81", f)
	}
	old := start(t, fakeironic.New(nil, 45), Config{}, nil)
	if _, err := old.ListNodes(hostabi.ListNodesRequest{}); err == nil || !strings.Contains(err.Error(), "needs at least 1.46") {
		t.Fatalf("1.45 server: %v", err)
	}
}

func TestListNodesRenegotiatesAfterA406(t *testing.T) {
	fake := fakeironic.New(fakeironic.Generate(3, 10), 82)
	fake.BeforeList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 1 {
			w.WriteHeader(406)
			return true
		}
		return false
	}
	c := start(t, fake, Config{}, nil)
	if _, err := c.ListNodes(hostabi.ListNodesRequest{}); err == nil {
		t.Fatal("406 accepted")
	}
	if _, err := c.ListNodes(hostabi.ListNodesRequest{}); err != nil {
		t.Fatal(err)
	}
	versionReads := 0
	for _, r := range fake.Requests() {
		if r == "/v1/" {
			versionReads++
		}
	}
	if versionReads != 2 {
		t.Fatalf("%d version reads, want 2", versionReads)
	}
}

func nodeUUIDs(ns []hostabi.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.UUID
	}
	return out
}

func mustQuery(t *testing.T, uri string) url.Values {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}
