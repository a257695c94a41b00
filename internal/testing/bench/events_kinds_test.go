package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// kindRun is one kind of change, made m times one after another.
type kindRun struct {
	name             string
	changes          int
	lags             []float64 // s, from the call to Ironic until Placement shows it
	requests         int       // Ironic requests of the engine
	notices, batches float64   // notifications received, batches synced
	fullCycles       float64   // full cycles meanwhile (should be 0)
}

// kind is one way of changing a node: do makes the k-th change and
// returns the test that Placement shows it.
type kind struct {
	name string
	do   func(s *scaleRig, u string, k int) func() bool
}

var changeKinds = []kind{
	{"maintenance on, off", func(s *scaleRig, u string, k int) func() bool {
		s.ic.Maintenance(s.t, u, k%2 == 0)
		want := int64(1 - k%2)
		return func() bool { _, r, ok := inventoryOf(s.placement, u); return ok && r == want }
	}},
	{"resource class", func(s *scaleRig, u string, k int) func() bool {
		c := []string{"bench-b", "bench-a"}[k%2]
		s.ic.SetResourceClass(s.t, u, c)
		return func() bool {
			rc, _, _ := inventoryOf(s.placement, u)
			return rc == "CUSTOM_"+strings.ToUpper(strings.ReplaceAll(c, "-", "_"))
		}
	}},
	{"traits", func(s *scaleRig, u string, k int) func() bool {
		tr := fmt.Sprintf("CUSTOM_BENCH_%d", k)
		s.ic.Traits(s.t, u, []string{tr})
		return func() bool { return slices.Contains(traitsOf(s.placement, u), tr) }
	}},
	{"manage, provide (no cleaning)", func(s *scaleRig, u string, k int) func() bool {
		if k%2 == 0 {
			s.ic.Provision(s.t, u, nodes.TargetManage, "manageable")
		} else {
			s.ic.Provision(s.t, u, nodes.TargetProvide, "available")
		}
		want := int64(1 - k%2)
		return func() bool { _, r, ok := inventoryOf(s.placement, u); return ok && r == want }
	}},
	{"deploy, undeploy (fake deploy, no cleaning)", func(s *scaleRig, u string, k int) func() bool {
		if k%2 == 0 {
			s.ic.Deploy(s.t, u, fmt.Sprintf("00000000-0000-4000-8000-%012d", k))
		} else {
			s.ic.Undeploy(s.t, u)
		}
		want := int64(1 - k%2)
		return func() bool { _, r, ok := inventoryOf(s.placement, u); return ok && r == want }
	}},
}

// kinds makes m changes of each kind on the first nodes, a node a kind, one at a
// time: each awaited in Placement, then 1.5 s for late notifications, so
// that every request it caused is counted with it.
func (s *scaleRig) kinds(m int) []kindRun {
	var out []kindRun
	for i, k := range changeKinds {
		u := s.uuids[i]
		r := kindRun{name: k.name, changes: m}
		before, c0 := s.counts(), s.eng.metric("rpengine_cycles_total")
		n0, b0 := s.eng.metric("rpengine_events_received_total"), s.eng.metric("rpengine_events_batches_total")
		for j := range m {
			at := time.Now()
			done := k.do(s, u, j)
			waitFor(s.t, time.Minute, k.name+" in Placement", done)
			r.lags = append(r.lags, time.Since(at).Seconds())
			time.Sleep(1500 * time.Millisecond)
		}
		r.requests = sumSince(s.counts(), before)
		r.notices = s.eng.metric("rpengine_events_received_total") - n0
		r.batches = s.eng.metric("rpengine_events_batches_total") - b0
		r.fullCycles = s.eng.metric("rpengine_cycles_total") - c0
		s.t.Logf("%s: %d changes, %d Ironic requests, %.0f notifications, %.0f batches, %.0f full cycles, lag p50 %.2f s",
			k.name, m, r.requests, r.notices, r.batches, r.fullCycles, pct(r.lags, 50))
		out = append(out, r)
	}
	return out
}

// meanPerChange is the Ironic requests per change over every kind.
func meanPerChange(rs []kindRun) float64 {
	req, n := 0, 0
	for _, r := range rs {
		req, n = req+r.requests, n+r.changes
	}
	return float64(req) / float64(max(n, 1))
}

// inventoryOf is the provider's one resource class and its reserved.
func inventoryOf(placement, u string) (rc string, reserved int64, ok bool) {
	var body struct {
		Inventories map[string]struct{ Reserved int64 }
	}
	if getJSON(placement+"/resource_providers/"+u+"/inventories", &body) != nil {
		return "", 0, false
	}
	for c, inv := range body.Inventories {
		return c, inv.Reserved, true
	}
	return "", 0, false
}

func traitsOf(placement, u string) []string {
	var body struct{ Traits []string }
	_ = getJSON(placement+"/resource_providers/"+u+"/traits", &body)
	return body.Traits
}

func getJSON(url string, into any) error {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
