package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// TestIronicEndToEnd runs the engine with ironic.wasm against the real
// Ironic and the real Placement: nodes in every state that matters, with
// traits, three resource classes and shards; pages of 3 so that every
// listing takes several marker pages with the filters re-applied, and a
// scope of two shards, the unsharded nodes and the default conductor group
// (conductor_group=""; one all-in-one Ironic serves no other group). Then
// it changes nodes in Ironic and checks the next cycles.
func TestIronicEndToEnd(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)

	node := func(name, rc, shard string) string {
		return c.Create(t, ironictest.Spec{Name: name, ResourceClass: rc, Shard: shard})
	}
	gold, silver, gpu := "baremetal-gold", "baremetal.silver", "gpu_A100"
	avail := node("avail", gold, "shard-a")
	c.Available(t, avail)
	c.Traits(t, avail, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"})
	active := node("active", gold, "shard-a")
	c.Available(t, active)
	c.Deploy(t, active, "a1111111-0000-4000-8000-000000000001")
	maint := node("maint", silver, "shard-b")
	c.Available(t, maint)
	c.Maintenance(t, maint, true)
	manageable := node("manageable", silver, "shard-b")
	c.Provision(t, manageable, nodes.TargetManage, "manageable")
	enroll := node("enroll", gpu, "shard-a")
	unpowered := node("unpowered", gold, "shard-b") // available, but power_state null
	c.Provision(t, unpowered, nodes.TargetManage, "manageable")
	c.Provision(t, unpowered, nodes.TargetProvide, "available")
	silverA := node("silver-a", silver, "shard-a")
	c.Available(t, silverA)
	unsharded := node("unsharded", gold, "")
	c.Available(t, unsharded)
	claimed := node("claimed", gpu, "shard-b") // available with an instance: reserved at once
	c.Available(t, claimed)
	c.SetInstance(t, claimed, "a1111111-0000-4000-8000-000000000009")
	outside := node("outside", gold, "shard-c")
	c.Available(t, outside)
	rescue := node("rescue", silver, "shard-a") // another stable state
	c.Available(t, rescue)
	c.Deploy(t, rescue, "a1111111-0000-4000-8000-000000000003")
	c.Rescue(t, rescue)
	c.SetInstance(t, rescue, "")               // no instance: reserved for its state alone
	retired := node("retired", gpu, "shard-b") // Ironic refuses retired in available
	c.Provision(t, retired, nodes.TargetManage, "manageable")
	c.Retire(t, retired)

	id := fmt.Sprintf("ironic-e2e-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, ironicURL, "page_size = 3",
		"shards = [\"shard-a\", \"shard-b\", \"\"]\nconductor_groups = [\"\"]") // "": the default group

	want := []ironicWant{
		{avail, gold, 0, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}},
		{active, gold, 1, nil},
		{maint, silver, 1, nil},
		{manageable, silver, 1, nil},
		{enroll, gpu, 1, nil},
		{unpowered, gold, 1, nil},
		{silverA, silver, 0, nil},
		{unsharded, gold, 0, nil},
		{claimed, gpu, 1, nil},
		{rescue, silver, 1, nil},
		{retired, gpu, 1, nil},
	}
	r := once(t, cfg)
	if r.Nodes != len(want) || r.Created != len(want) {
		t.Fatalf("first cycle: %+v", r)
	}
	ironicCheck(t, placementURL, id, want, []string{outside})

	// Nothing changed: nothing written.
	if r = once(t, cfg); r.Created+r.Updated+r.Deleted != 0 || r.Unchanged != len(want) {
		t.Fatalf("idle cycle: %+v", r)
	}

	// Change the fleet in Ironic.
	c.Maintenance(t, maint, false) // schedulable again
	c.Maintenance(t, avail, true)  // reserved
	c.Traits(t, avail, []string{"CUSTOM_GOLD", "CUSTOM_NEW"})
	c.Deploy(t, silverA, "a1111111-0000-4000-8000-000000000002") // deployed: reserved
	c.Undeploy(t, active)                                        // torn down, still powered: free
	c.Delete(t, manageable)                                      // deleted: provider goes after two proofs
	c.SetShard(t, unsharded, "shard-c")                          // moved out of scope: reserved, never deleted
	c.SetShard(t, outside, "shard-a")                            // moved into scope: created
	want = []ironicWant{
		{avail, gold, 1, []string{"CUSTOM_GOLD", "CUSTOM_NEW"}},
		{active, gold, 0, nil},
		{maint, silver, 0, nil},
		{enroll, gpu, 1, nil},
		{unpowered, gold, 1, nil},
		{silverA, silver, 1, nil},
		{claimed, gpu, 1, nil},
		{rescue, silver, 1, nil},
		{retired, gpu, 1, nil},
		{outside, gold, 0, nil},
	}
	released := ironicWant{unsharded, gold, 1, nil} // fully reserved when it left the scope (left_scope)

	r = once(t, cfg)
	if r.Nodes != len(want) || r.Created != 1 || r.Updated != 4 || r.Deleted != 0 {
		t.Fatalf("cycle after the changes: %+v", r)
	}
	// The deleted node is proven gone once: its provider waits for a second proof.
	ironicCheck(t, placementURL, id, append(want, released, ironicWant{manageable, silver, 1, nil}), nil)

	r = once(t, cfg)
	if r.Deleted != 1 || r.Created+r.Updated != 0 {
		t.Fatalf("second cycle after the changes: %+v", r)
	}
	ironicCheck(t, placementURL, id, append(want, released), []string{manageable})

	// Idle again, and the released node's provider is still there.
	if r = once(t, cfg); r.Created+r.Updated+r.Deleted != 0 {
		t.Fatalf("final idle cycle: %+v", r)
	}
	ironicCheck(t, placementURL, id, []ironicWant{released}, nil)
}

// A page that fails in the middle of a listing fails the cycle before any
// write: the node deleted in Ironic keeps its provider, and a change
// listed on page 1 is not written either.
func TestIronicMidListingFailureWritesNothing(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	uuids := availableGold(t, c, 5, "n", "")
	proxy := newIronicProxy(t, ironicURL)
	id := fmt.Sprintf("ironic-fail-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "page_size = 2", "")
	once(t, cfg)
	want := make([]ironicWant, len(uuids))
	for i, u := range uuids {
		want[i] = ironicWant{u, "baremetal-gold", 0, nil}
	}
	ironicCheck(t, placementURL, id, want, nil)

	c.Maintenance(t, uuids[0], true) // on page 1
	c.Provision(t, uuids[4], nodes.TargetManage, "manageable")
	c.Delete(t, uuids[4]) // on page 3, which is never read
	proxy.onList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Query().Get("marker") != "" { // page 2 of every cycle
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error_message": "{\"faultstring\": \"conductor down\"}"}`))
			return true
		}
		return false
	}
	for range 2 { // twice: a second failed cycle must not complete a deletion proof either
		r, res := ironicOnce(t, cfg)
		ironicNoWrites(t, r, res, "HTTP 503")
		ironicCheck(t, placementURL, id, want, nil)
	}

	proxy.onList = nil
	once(t, cfg)
	want[0].reserved = 1
	ironicCheck(t, placementURL, id, want[:4], nil) // uuids[4]: one proof so far
}

// A marker node deleted between two pages makes Ironic answer 404; the
// plugin restarts the listing and the cycle succeeds without that node.
func TestIronicMarkerDeletedBetweenPagesRestartsTheListing(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	uuids := availableGold(t, c, 5, "m", "s1")
	proxy := newIronicProxy(t, ironicURL)
	deleted := ""
	proxy.onList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 { // before page 2 is served, its marker node is deleted
			deleted = ironicQuery(t, r.URL.RequestURI(), "marker")
			c.Provision(t, deleted, nodes.TargetManage, "manageable")
			c.Delete(t, deleted)
		}
		return false
	}
	id := fmt.Sprintf("ironic-marker-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "page_size = 2", `shards = ["s1"]`)
	r := once(t, cfg)
	if r.Nodes != 4 || r.Created != 4 {
		t.Fatalf("cycle: %+v", r)
	}
	lists := proxy.listed()
	// page 1, page 2 (404), then a full restart: pages 1, 2, 3
	if len(lists) != 5 || ironicQuery(t, lists[2], "marker") != "" {
		t.Fatalf("requests %v, want a restart after the 404", lists)
	}
	for _, l := range lists {
		if ironicQuery(t, l, "shard") != "s1" {
			t.Errorf("request %s lost the shard filter", l)
		}
	}
	var want []ironicWant
	for _, u := range uuids {
		if u != deleted {
			want = append(want, ironicWant{u, "baremetal-gold", 0, nil})
		}
	}
	ironicCheck(t, placementURL, id, want, []string{deleted})
}

// An Ironic that cannot filter by shard (simulated by rewriting the real
// one's version range to end at 1.81) is refused, not listed unfiltered.
func TestIronicRefusesAShardScopeTheServerCannotFilter(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	u := c.Create(t, ironictest.Spec{Name: "v", ResourceClass: "baremetal-gold", Shard: "s1"})
	c.Available(t, u)
	proxy := newIronicProxy(t, ironicURL)
	proxy.rewrite = func(resp *http.Response) {
		resp.Header.Set("X-OpenStack-Ironic-API-Maximum-Version", "1.81")
	}
	id := fmt.Sprintf("ironic-version-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "", `shards = ["s1"]`)
	r, res := ironicOnce(t, cfg)
	ironicNoWrites(t, r, res, "refusing to list rather than widen the scope")
	if lists := proxy.listed(); len(lists) != 0 {
		t.Fatalf("listed anyway: %v", lists)
	}
	ironicCheck(t, placementURL, id, nil, []string{u})

	// The same server without a shard scope is fine (shard is not asked).
	cfg = ironicConfig(t, id, placementURL, plugin, proxy.url, "", "")
	if r = once(t, cfg); r.Created != 1 {
		t.Fatalf("unscoped cycle: %+v", r)
	}
	for _, l := range proxy.listed() {
		if strings.Contains(ironicQuery(t, l, "fields"), "shard") {
			t.Fatalf("asked for shard at 1.81: %s", l)
		}
	}
}

// A node that shows up on two pages (here Ironic is made to serve
// overlapping pages) is reported once: no duplicate, no quarantine.
func TestIronicNodeOnTwoPagesIsOneNode(t *testing.T) {
	placementURL := placementtest.Shared(t)
	ironicURL := ironictest.StartReal(t)
	plugin := plugintest.Build(t, "plugins/ironic")
	c := ironictest.NewClient(t, ironicURL)
	uuids := availableGold(t, c, 5, "d", "")
	proxy := newIronicProxy(t, ironicURL)
	proxy.onList = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 { // page 2 starts one node early: it repeats page 1's last node
			q := r.URL.Query()
			q.Set("marker", uuids[0])
			r.URL.RawQuery = q.Encode()
		}
		return false
	}
	id := fmt.Sprintf("ironic-dup-%x", os.Getpid())
	cfg := ironicConfig(t, id, placementURL, plugin, proxy.url, "page_size = 2", "")
	r := once(t, cfg) // once fails the test on any error, a quarantine included
	if r.Nodes != 5 || r.Created != 5 || r.Quarantined != 0 {
		t.Fatalf("cycle: %+v", r)
	}
	// Pages: [0 1], then from 0: [1 2] (1 again), [3 4], [] - four requests.
	if lists := proxy.listed(); len(lists) != 4 {
		t.Fatalf("requests %v, want 4 pages", lists)
	}
}
