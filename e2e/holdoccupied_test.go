package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// arrivalLog stands between the engine and Placement and records every
// request ("METHOD path?query") as it arrives, before it is forwarded: a
// request is in the log before the engine can have its answer, so what
// was taken once a cycle has ended is exactly what that cycle sent.
type arrivalLog struct {
	url  string
	mu   sync.Mutex
	reqs []string
}

func newArrivalLog(t *testing.T, placementURL string) *arrivalLog {
	t.Helper()
	target, err := neturl.Parse(placementURL)
	if err != nil {
		t.Fatal(err)
	}
	l := &arrivalLog{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.RequestURI())
		l.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	l.url = srv.URL
	return l
}

// take returns the requests since the last take.
func (l *arrivalLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

// occNode is one node of the fake plugin's world here.
type occNode struct {
	uuid, rc string
	retired  bool
}

func occWorld(nodes []occNode) string {
	var b strings.Builder
	b.WriteString("[plugin.config]\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "[[plugin.config.node]]\nuuid = %q\nresource_class = %q\npower_state = \"power on\"\n"+
			"provision_state = \"available\"\nretired = %v\n", n.uuid, n.rc, n.retired)
	}
	return b.String()
}

// occRig is the engine beside nova on the shared real Placement, behind a
// request log, with a daemon whose cycles the test starts one at a time.
type occRig struct {
	t         *testing.T
	url       string // Placement, direct
	reqs      *arrivalLog
	nodes     []occNode
	cfg, addr string
	owner     string
	cycles    int
	logs      *syncBuffer
}

// writeCfg writes the config for the nodes as they are now; the interval
// is long so that only the cycles the test asks for run.
func (r *occRig) writeCfg(id, plugin string) {
	extra := "\n[server]\nlisten = \"" + r.addr + "\"\n\n" + occWorld(r.nodes) + "\n[nova]\nbeside = true\n"
	cfg := writeConfig(r.t, id, r.reqs.url, plugin, extra)
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `interval = "5s"`, `interval = "1h"`, 1)), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.cfg = cfg
}

// once runs `engine once` (a fresh process) and returns its report and
// requests.
func (r *occRig) once() (novaReport, []string) {
	r.t.Helper()
	r.reqs.take()
	res := runEngine(r.t, "once", "--config", r.cfg, "--json")
	var rep novaReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || res.code != 0 || len(rep.Errors) > 0 || rep.Nova == nil {
		r.t.Fatalf("engine once: exit %d, %s\nstderr %s", res.code, res.stdout, res.stderr)
	}
	return rep, r.reqs.take()
}

// cycle asks the daemon for one cycle, waits until its report counts it
// as ended, and returns the report and the requests the cycle sent.
func (r *occRig) cycle() (cycleReport, []string) {
	r.t.Helper()
	resp, err := http.Post("http://"+r.addr+"/api/v1/cycle", "", nil)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		r.t.Fatalf("POST /api/v1/cycle: %v %v", err, resp)
	}
	resp.Body.Close()
	r.cycles++
	waitCycles(r.t, r.addr, r.cycles, r.logs)
	reqs := r.reqs.take()
	var rep cycleReport
	if code, body := get(r.t, "http://"+r.addr+"/api/v1/report"); code != 200 || json.Unmarshal([]byte(body), &rep) != nil ||
		rep.Report == nil || rep.Report.Nova == nil || rep.Cycles != r.cycles {
		r.t.Fatalf("GET /api/v1/report after cycle %d: %d %s", r.cycles, code, body)
	}
	if rep.Report.PlacementRequests != int64(len(reqs)) {
		r.t.Fatalf("cycle %d: the engine counts %d requests, the proxy saw %d:\n%s",
			r.cycles, rep.Report.PlacementRequests, len(reqs), strings.Join(reqs, "\n"))
	}
	return rep, reqs
}

// schedulable asks the scheduler's question for each class and returns
// the nodes Placement offers.
func (r *occRig) schedulable() map[string]bool {
	r.t.Helper()
	out := map[string]bool{}
	for _, rc := range []string{"CUSTOM_GOLD", "CUSTOM_SILVER"} {
		var c struct {
			Summaries map[string]any `json:"provider_summaries"`
		}
		if code := placementGet(r.t, r.url, "/allocation_candidates?resources="+rc+":1", &c); code != 200 {
			r.t.Fatalf("allocation_candidates %s: %d", rc, code)
		}
		for u := range c.Summaries {
			out[u] = true
		}
	}
	return out
}

// checkSchedulable fails unless exactly the free nodes are offered.
func (r *occRig) checkSchedulable(when string) {
	r.t.Helper()
	got := r.schedulable()
	for _, n := range r.nodes {
		if got[n.uuid] == n.retired {
			r.t.Errorf("%s: node %s (retired %v) offered to the scheduler: %v", when, n.uuid, n.retired, got[n.uuid])
		}
	}
}

// roomListing is the request the design sends once per hold class.
func (r *occRig) roomListing(reqs []string, rc string) int {
	n := 0
	for _, q := range reqs {
		if !strings.HasPrefix(q, "GET /resource_providers?") {
			continue
		}
		v, _ := neturl.ParseQuery(q[len("GET /resource_providers?"):])
		if v.Get("required") == r.owner && v.Get("resources") == rc+":1" {
			n++
		}
	}
	return n
}

// naming returns the requests that name one of the uuids (a provider or
// a hold consumer).
func naming(reqs []string, uuids []string) []string {
	var out []string
	for _, q := range reqs {
		for _, u := range uuids {
			if strings.Contains(q, u) {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

func plantInstance(t *testing.T, url, consumer, node, rc string) {
	t.Helper()
	plant(t, url, "PUT", "/allocations/"+consumer, map[string]any{
		"allocations": map[string]any{node: map[string]any{"resources": map[string]int{rc: 1}}},
		"project_id":  "e2e", "user_id": "e2e", "consumer_generation": nil, "consumer_type": "INSTANCE"})
}

// On Debian's Placement, beside nova: six nodes the rules reserve (four
// gold, two silver) that instances already occupy. A fresh process
// (`engine once`) pays three requests per occupied node (GET consumer,
// POST /reshaper refused, GET usages), the cost before holdoccupied.go and
// the cost of every once, since the refusals are remembered per process.
// The running daemon remembers them: a steady cycle sends its listing,
// the hold project's usage and one listing of providers with room per
// hold class, 2+2 requests, nothing naming an occupied node. DELETE
// /allocations of one occupant leaves its provider's generation as it
// was and puts the node in its class's listing; the next cycle holds it.
// The daemon's cycles are asked for one at a time (POST /api/v1/cycle,
// interval 1h), so the requests between two ends of cycles are one
// cycle's, counted by cycle, not by time.
func TestOccupiedHoldsCostOneListingPerClassOnRealPlacement(t *testing.T) {
	url := placementtest.Shared(t)
	plugin := plugintest.Build(t, "plugins/fake")
	u := func(i int) string { return uuidFor(t.Name(), i) }
	inst := func(i int) string { return uuidFor(t.Name(), 100+i) }
	id := fmt.Sprintf("holdocc-%x", os.Getpid())
	r := &occRig{t: t, url: url, reqs: newArrivalLog(t, url), addr: freeAddr(t), owner: engine.OwnerTrait(id)}
	// 0-3 gold and 4-5 silver: occupied; 6: gold, held; 7, 8: free.
	for i, rc := range []string{"gold", "gold", "gold", "gold", "silver", "silver", "gold", "gold", "silver"} {
		r.nodes = append(r.nodes, occNode{uuid: u(i), rc: rc})
	}
	const occupied, classes = 6, 2
	rcOf := func(i int) string { return "CUSTOM_" + strings.ToUpper(r.nodes[i].rc) }
	r.writeCfg(id, plugin)
	r.once() // the providers; nothing reserved yet
	for i := range occupied {
		plantInstance(t, url, inst(i), u(i), rcOf(i))
		t.Cleanup(func() { placementDo(t, url, "DELETE", "/allocations/"+inst(i), nil) })
	}
	for i := range 7 {
		r.nodes[i].retired = true
	}
	r.writeCfg(id, plugin)
	if rep, _ := r.once(); rep.Nova.Placed != 1 || rep.Nova.Occupied != occupied {
		t.Fatalf("first once with the nodes retired: %+v", rep.Nova)
	}
	old := 2 + 3*occupied
	if rep, reqs := r.once(); len(reqs) != old || rep.PlacementRequests != old || rep.Nova.Occupied != occupied {
		t.Fatalf("fresh process, nothing changed: %d requests (report %d), want %d = 2 + 3 per occupied node; %+v\n%s",
			len(reqs), rep.PlacementRequests, old, rep.Nova, strings.Join(reqs, "\n"))
	}
	r.checkSchedulable("after engine once")

	_, r.logs = startDaemon(t, r.cfg)
	r.cycles = waitCycles(t, r.addr, 1, r.logs).Cycles
	t.Logf("the daemon's first cycle (refusals): %d requests", len(r.reqs.take()))
	for range 3 {
		r.steady(occupied, classes)
	}
	r.checkSchedulable("steady")
	r.occupantLeaves(u, inst, rcOf)
	// The reshape moved node 0's generation, so the owner listing moved:
	// holdswap.go's check needs the held class's room listing too, and
	// shares the one the occupied holds ask for (roomFor).
	if rep, reqs := r.cycle(); len(reqs) != 2+classes || r.roomListing(reqs, "CUSTOM_GOLD") != 1 || rep.Report.Nova.Occupied != occupied-1 {
		t.Fatalf("cycle after the hold was placed: %d requests, want %d; %+v\n%s", len(reqs), 2+classes, *rep.Report.Nova, strings.Join(reqs, "\n"))
	}
	for range 2 {
		r.steady(occupied-1, classes)
	}
}

// steady checks one cycle of the daemon with nothing changed: 2 + one
// listing per class, none naming a node, occupied holds still refused.
func (r *occRig) steady(occupied, classes int) {
	r.t.Helper()
	rep, reqs := r.cycle()
	nova := rep.Report.Nova
	var nodes []string
	for _, n := range r.nodes {
		nodes = append(nodes, n.uuid, engine.HoldConsumer(r.owner, n.uuid))
	}
	if len(reqs) != 2+classes || r.roomListing(reqs, "CUSTOM_GOLD") != 1 || r.roomListing(reqs, "CUSTOM_SILVER") != 1 ||
		len(naming(reqs, nodes)) > 0 || nova.Occupied != occupied || nova.Placed != 0 || nova.Held != 7-occupied {
		r.t.Fatalf("steady cycle %d with %d occupied holds: %d requests, want %d (not %d, 3 per occupied node); %+v\n%s",
			r.cycles, occupied, len(reqs), 2+classes, 2+3*occupied, *nova, strings.Join(reqs, "\n"))
	}
}

// occupantLeaves deletes node 0's instance allocation as nova does when
// the instance goes, checks what the design assumes of Placement, and
// that the next cycle holds the node.
func (r *occRig) occupantLeaves(u, inst func(int) string, rcOf func(int) string) {
	t := r.t
	t.Helper()
	before := generation(t, r.url, u(0))
	plant(t, r.url, "DELETE", "/allocations/"+inst(0), nil)
	if g := generation(t, r.url, u(0)); g != before {
		t.Fatalf("Placement moved %s's generation on DELETE /allocations/{consumer}: %d -> %d", u(0), before, g)
	}
	var room struct {
		Providers []struct{ UUID string } `json:"resource_providers"`
	}
	placementGet(t, r.url, "/resource_providers?required="+r.owner+"&resources="+rcOf(0)+":1", &room)
	var listed []string
	for _, p := range room.Providers {
		listed = append(listed, p.UUID)
	}
	if strings.Join(listed, " ") != u(0)+" "+u(7) && strings.Join(listed, " ") != u(7)+" "+u(0) {
		t.Fatalf("providers with room for %s after the occupant left: %v, want %s (freed) and %s (free)", rcOf(0), listed, u(0), u(7))
	}
	if !r.schedulable()[u(0)] {
		t.Fatalf("node %s freed but not offered to the scheduler", u(0))
	}
	rep, reqs := r.cycle()
	if nova := rep.Report.Nova; nova.Placed != 1 || nova.Occupied != 5 || !holdOn(t, r.url, r.owner, u(0)) {
		t.Fatalf("cycle after the occupant left: %+v, hold on %s %v\n%s", *nova, u(0), holdOn(t, r.url, r.owner, u(0)), strings.Join(reqs, "\n"))
	}
	var others []string
	for i := 1; i < 6; i++ {
		others = append(others, u(i), engine.HoldConsumer(r.owner, u(i)))
	}
	if got := naming(reqs, others); len(got) > 0 {
		t.Fatalf("cycle after the occupant left asked about the nodes still occupied: %v", got)
	}
	hold := engine.HoldConsumer(r.owner, u(0))
	if i := slices.Index(reqs, "POST /reshaper"); i < 1 || reqs[i-1] != "GET /allocations/"+hold || slices.Index(reqs[i+1:], "POST /reshaper") >= 0 {
		t.Fatalf("cycle after the occupant left: want one reshape, after reading %s's hold consumer:\n%s", u(0), strings.Join(reqs, "\n"))
	}
	r.checkSchedulable("after the hold was placed")
	t.Logf("cycle placing the freed node's hold: %d requests\n%s", len(reqs), strings.Join(reqs, "\n"))
}
