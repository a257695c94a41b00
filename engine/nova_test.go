package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

const goldRC = "CUSTOM_BAREMETAL_GOLD"

// ownHold says whether an /allocations path names one of this engine's
// hold consumers: beside nova, the only consumers it may touch.
func (r *rig) ownHold(path string) bool {
	c := strings.TrimPrefix(path, "/allocations/")
	nodes := r.fake.ProviderUUIDs()
	for i := range 100 { // and those deleted meanwhile
		nodes = append(nodes, nodeUUID(i))
	}
	for _, p := range nodes {
		if engine.HoldConsumer(r.ownerT, p) == c {
			return true
		}
	}
	return false
}

func besideRig(t *testing.T, nodes int) *rig {
	r := newRig(t, nodes)
	r.pol.Nova = engine.Beside{Enabled: true, HoldProject: "rpengine-hold-test", HoldUser: "rpengine-hold-test"}
	r.restart()
	return r
}

// nova is what nova-compute's Ironic driver would write at a refresh:
// reserved by its own rule, and the traits it owns (here: it strips the
// owner marker, as without a provider config).
func (r *rig) novaRewrites(uuid string, reserved int64, stripMarker bool) {
	r.t.Helper()
	if err := r.fake.SetReserved(uuid, goldRC, reserved); err != nil {
		r.t.Fatal(err)
	}
	if stripMarker {
		if err := r.fake.RemoveTrait(uuid, r.ownerT); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rig) held(uuid string) bool {
	c, ok := r.fake.Consumer(engine.HoldConsumer(r.ownerT, uuid))
	return ok && c.Type == engine.HoldConsumerType && c.Project == "rpengine-hold-test" &&
		c.Allocations[uuid][goldRC] == 1 && len(c.Allocations) == 1
}

// Beside nova, the inventory follows nova's rule and the stricter
// conditions become holds; nova's rewrite of the same values is then a
// no-op for both, and each condition's end releases its hold.
func TestBesideNovaHoldsInsteadOfReserving(t *testing.T) {
	r := besideRig(t, 6)
	r.src.set(func(s *source) {
		s.nodes[0].Retired = true                  // nova 0, engine: hold
		s.nodes[1].Fault = "power failure"         // nova 0, engine: hold
		s.nodes[2].TargetProvisionState = "active" // nova 0, engine: hold
		s.nodes[3].Maintenance = true              // both reserve
		s.nodes[4].InstanceUUID = "i-4"            // both reserve
	})
	rep := r.cleanCycle()
	if rep.Nova == nil || rep.Nova.Placed != 3 || rep.Nova.Held != 3 {
		t.Fatalf("first cycle: %+v", rep.Nova)
	}
	for i, want := range []struct {
		reserved int64
		hold     bool
	}{{0, true}, {0, true}, {0, true}, {1, false}, {1, false}, {0, false}} {
		u := nodeUUID(i)
		if got := r.reserved(u); got != want.reserved || r.held(u) != want.hold {
			t.Errorf("node %d: reserved %d held %v, want %d %v", i, got, r.held(u), want.reserved, want.hold)
		}
	}
	// A hold bumps its provider's generation: the next cycle re-reads the
	// three once (no write). Then idle: the owner listing and the hold
	// project's usage, nothing else.
	if rep = r.cleanCycle(); rep.Updated != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("cycle after the holds: %+v", rep)
	}
	rep = r.cleanCycle()
	if rep.Updated+rep.Created != 0 || rep.Nova.Placed+rep.Nova.Released+rep.Nova.Scanned != 0 || rep.PlacementRequests != 2 {
		t.Fatalf("idle cycle: %+v %+v", rep, rep.Nova)
	}
	// nova re-reads and writes its own values: identical, so no writes
	// from the engine either, and no foreign rewrite counted.
	for i := range 6 {
		r.novaRewrites(nodeUUID(i), map[bool]int64{true: 1}[i == 3 || i == 4], false)
	}
	if rep = r.cleanCycle(); rep.Updated != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("after nova's identical rewrite: updated %d, foreign %d", rep.Updated, rep.ForeignRewrites)
	}
	// The conditions end: holds go, and only ours.
	r.fake.Allocate("a1111111-0000-4000-8000-000000000004", nodeUUID(4), map[string]int64{goldRC: 1})
	r.src.set(func(s *source) { s.nodes[1].Fault, s.nodes[2].TargetProvisionState = "", "" })
	rep = r.cleanCycle()
	if rep.Nova.Released != 2 || rep.Nova.Held != 1 || r.held(nodeUUID(1)) || r.held(nodeUUID(2)) || !r.held(nodeUUID(0)) {
		t.Fatalf("after the conditions ended: %+v", rep.Nova)
	}
	if _, ok := r.fake.Consumer("a1111111-0000-4000-8000-000000000004"); !ok {
		t.Fatal("an instance's allocation was touched")
	}
}

// The book is in the record and checked against Placement: a new process
// with the record reads no hold back; one without it finds the holds of
// the last one (no duplicate, no write); a hold deleted behind its back
// (nova-manage placement audit --delete) is found and put back.
func TestHoldsAreDerivedFromPlacement(t *testing.T) {
	r := besideRig(t, 4)
	r.src.set(func(s *source) { s.nodes[0].Retired, s.nodes[1].Fault = true, "x" })
	r.cleanCycle()
	r.cleanCycle() // re-reads the held providers once
	r.restart()    // a new process with the record
	rep := r.cleanCycle()
	if rep.Nova.Placed != 0 || rep.Nova.Held != 2 || rep.Nova.Scanned != 0 || rep.PlacementRequests != 3 {
		// 3: the owner listing, the hold project's usage, and GET / (this
		// rig's new client has no recorded microversion; cmd/engine's has)
		t.Fatalf("new process with the record: %+v, %d requests", rep.Nova, rep.PlacementRequests)
	}
	r.state, _ = engine.LoadState("", "")
	r.restart() // a new process without it
	rep = r.cleanCycle()
	if rep.Nova.Placed != 0 || rep.Nova.Held != 2 || rep.Nova.Scanned != 2 {
		t.Fatalf("new process: %+v", rep.Nova)
	}
	if !r.fake.DropConsumer(engine.HoldConsumer(r.ownerT, nodeUUID(1))) {
		t.Fatal("no hold to drop")
	}
	rep = r.cleanCycle()
	if rep.Nova.Placed != 1 || !r.held(nodeUUID(1)) {
		t.Fatalf("after the hold was deleted: %+v", rep.Nova)
	}
	// A crash after the node healed leaves a stale hold: a new process
	// finds it by the full scan and releases it.
	r.src.set(func(s *source) { s.nodes[1].Fault = "" })
	r.restart()
	r.eng = engine.New(r.src, r.pc, r.pol, r.opts, r.state, nil)
	rep = r.cleanCycle()
	if rep.Nova.Released != 1 || r.held(nodeUUID(1)) || !r.held(nodeUUID(0)) {
		t.Fatalf("stale hold after a restart: %+v", rep.Nova)
	}
}

// A node whose unit an instance already uses needs no hold: Placement
// refuses it for capacity, and that is not an error.
func TestHoldOnOccupiedNode(t *testing.T) {
	r := besideRig(t, 2)
	r.cleanCycle()
	r.fake.Allocate("a1111111-0000-4000-8000-000000000001", nodeUUID(0), map[string]int64{goldRC: 1})
	r.src.set(func(s *source) { s.nodes[0].Fault = "x" })
	rep := r.cleanCycle()
	if rep.Nova.Occupied != 1 || rep.Nova.Held != 0 || r.held(nodeUUID(0)) {
		t.Fatalf("occupied node: %+v", rep.Nova)
	}
}

// Without the provider config nova strips the marker and resets reserved:
// the engine writes them back and counts each rewrite, so a fight shows.
func TestForeignRewritesCounted(t *testing.T) {
	r := newRig(t, 4) // alone: reserved by the engine's matrix
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cleanCycle()
	r.novaRewrites(nodeUUID(0), 0, true)
	r.novaRewrites(nodeUUID(1), 0, true)
	rep := r.cleanCycle()
	if rep.ForeignRewrites != 2 || r.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("after nova's rewrite: foreign %d, reserved %d", rep.ForeignRewrites, r.reserved(nodeUUID(0)))
	}
	if rep = r.cleanCycle(); rep.ForeignRewrites != 0 {
		t.Fatalf("quiet cycle counted %d rewrites", rep.ForeignRewrites)
	}
	// A change the engine agrees with is not a rewrite.
	r.src.set(func(s *source) { s.nodes[2].Maintenance = true })
	r.novaRewrites(nodeUUID(2), 1, false)
	if rep = r.cleanCycle(); rep.ForeignRewrites != 0 || rep.Updated != 0 {
		t.Fatalf("agreeing change: foreign %d, updated %d", rep.ForeignRewrites, rep.Updated)
	}
}

// A quarantined node (bad data) keeps its hold; a node out of the listing
// gives it up, so its provider can be deleted on proof.
func TestHoldKeptForQuarantinedNode(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Fault, s.nodes[1].Fault = "x", "y" })
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[0].ResourceClass = "" // quarantined
		s.nodes = []hostabi.Node{s.nodes[0], s.nodes[2]}
	})
	rep := r.cycle()
	if !r.held(nodeUUID(0)) || r.held(nodeUUID(1)) || rep.Nova.Released != 1 {
		t.Fatalf("quarantined keeps, unlisted releases: %+v", rep.Nova)
	}
}

func TestHoldConsumerIsStableAndDistinct(t *testing.T) {
	a := engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(1))
	if a != engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(1)) ||
		a == engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_B", nodeUUID(1)) ||
		a == engine.HoldConsumer("CUSTOM_RPENGINE_OWNER_A", nodeUUID(2)) {
		t.Fatal("hold consumer not a function of (engine, node)")
	}
	if len(a) != 36 || a[14] != '5' {
		t.Fatalf("not a version-5 uuid: %s", a)
	}
}

// watchWindows puts a proxy between the engine and the fake that, after
// every write, checks that no node in nodes is allocatable (a class with a
// free unit): each such instant is a window the scheduler could use.
func (r *rig) watchWindows(nodes ...string) *[]string {
	r.t.Helper()
	var mu sync.Mutex
	var windows []string
	target, _ := url.Parse(r.fake.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		proxy.ServeHTTP(w, req)
		if req.Method == "GET" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, u := range nodes {
			p, ok := r.fake.Provider(u)
			for rc, inv := range p.Inventories {
				if ok && inv.Total-inv.Reserved-p.Usages[rc] >= 1 {
					windows = append(windows, fmt.Sprintf("after %s %s: %s offers %s", req.Method, req.URL.Path, u, rc))
				}
			}
		}
	}))
	r.t.Cleanup(srv.Close)
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: srv.URL, Token: "admin"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.pc = pc
	r.eng = engine.New(r.src, pc, r.pol, r.opts, r.state, nil)
	return &windows
}

// A held node whose class changes: the hold moves to the new class in the
// same request that writes it (a reshape), so at no instant between the
// engine's requests is the node allocatable, and nothing is left on the
// old class.
func TestHeldNodeClassChangeOpensNoWindow(t *testing.T) {
	r := besideRig(t, 2)
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.cleanCycle()
	r.cleanCycle()
	windows := r.watchWindows(nodeUUID(0))
	r.fake.ResetRequests()
	r.src.set(func(s *source) { s.nodes[0].ResourceClass = "baremetal-silver" })
	rep := r.cleanCycle()
	const silver = "CUSTOM_BAREMETAL_SILVER"
	p := r.provider(nodeUUID(0))
	c, _ := r.fake.Consumer(engine.HoldConsumer(r.ownerT, nodeUUID(0)))
	if len(*windows) > 0 || rep.Nova.Placed != 1 || len(p.Inventories) != 1 || p.Inventories[silver].Reserved != 0 ||
		c.Allocations[nodeUUID(0)][silver] != 1 {
		t.Fatalf("class change under a hold: windows %v, %+v, inventory %v, hold %v", *windows, rep.Nova, p.Inventories, c.Allocations)
	}
	var writes []string
	for _, q := range r.fake.Requests() {
		if q.Method != "GET" && q.Status < 300 && !strings.HasPrefix(q.Path, "/resource_classes/") {
			writes = append(writes, q.Method+" "+q.Path)
		}
	}
	if !slices.Equal(writes, []string{"POST /reshaper"}) {
		t.Fatalf("class change under a hold: writes %v, want the one reshape (and the new class)", writes)
	}
	if rep = r.cleanCycle(); rep.Updated+rep.Nova.Placed+rep.Nova.Released != 0 {
		t.Fatalf("after the move: %+v %+v", rep, rep.Nova)
	}
}

// A node that starts needing a hold while its inventory becomes
// unreserved by nova's rule (maintenance ends on a retired node): the
// inventory and the hold are one write, never reserved 0 without it.
func TestHoldAndUnreserveAreOneWrite(t *testing.T) {
	r := besideRig(t, 2)
	r.src.set(func(s *source) { s.nodes[0].Retired, s.nodes[0].Maintenance = true, true })
	r.cleanCycle()
	windows := r.watchWindows(nodeUUID(0))
	r.src.set(func(s *source) { s.nodes[0].Maintenance = false })
	rep := r.cleanCycle()
	if len(*windows) > 0 || rep.Nova.Placed != 1 || r.reserved(nodeUUID(0)) != 0 || !r.held(nodeUUID(0)) {
		t.Fatalf("maintenance ended on a retired node: windows %v, %+v, reserved %d", *windows, rep.Nova, r.reserved(nodeUUID(0)))
	}
}

// A held node deleted in the source: its hold is released only once its
// provider is fully reserved (or deleted), never leaving it allocatable
// in between; the provider is deleted on proof as ever.
func TestHoldReleasedForDeletedNodeOpensNoWindow(t *testing.T) {
	r := besideRig(t, 3)
	r.opts.DeleteGrace = 0
	r.src.set(func(s *source) { s.nodes[0].Retired = true })
	r.restart()
	r.cleanCycle()
	windows := r.watchWindows(nodeUUID(0))
	r.src.set(func(s *source) { s.nodes = s.nodes[1:]; s.gone[nodeUUID(0)] = true })
	// First proof: the provider fully reserved (pending_deletion), then
	// the hold released in the same cycle; second proof: deleted.
	rep := r.cleanCycle()
	if rep.Nova.Released != 1 || r.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("first proof: %+v, reserved %d", rep.Nova, r.reserved(nodeUUID(0)))
	}
	if rep = r.cleanCycle(); rep.Deleted != 1 {
		t.Fatalf("second proof: %+v", rep)
	}
	if _, ok := r.fake.Provider(nodeUUID(0)); ok {
		t.Fatal("provider of the deleted node still there after the second proof")
	}
	if len(*windows) > 0 {
		t.Fatalf("deleted held node was allocatable: %v", *windows)
	}
	if _, ok := r.fake.Consumer(engine.HoldConsumer(r.ownerT, nodeUUID(0))); ok {
		t.Fatal("hold left behind")
	}
}

// A hold is only ever on a custom class: on nova's standard classes
// (VCPU, MEMORY_MB, ...) nova's audit would delete it and its quota would
// count it.
func TestNoHoldOnStandardClass(t *testing.T) {
	r := besideRig(t, 1)
	r.src.set(func(s *source) {
		s.nodes[0].ResourceClass = ""
		s.nodes[0].Resources = map[string]hostabi.Resource{"VCPU": {Total: 8}}
		s.nodes[0].Maintenance = true
	})
	rep := r.cleanCycle()
	if rep.Nova.Placed != 0 || rep.Nova.Held != 0 {
		t.Fatalf("explicit resources beside nova: %+v", rep.Nova)
	}
	if p := r.provider(nodeUUID(0)); p.Inventories["VCPU"].Reserved != 8 {
		t.Fatalf("explicit resources beside nova are reserved, not held: %v", p.Inventories)
	}
}

// nova ≥ 34 writes OWNER_NOVA on every provider it reports. Beside nova
// that is the co-owner's trait: a provider of ours carrying it is left as
// it is (no write, no rewrite counted), and one nova created with it is
// adopted, not refused.
func TestOwnerNovaBesideNova(t *testing.T) {
	r := besideRig(t, 3)
	r.cleanCycle()
	for i := range 2 {
		if err := r.fake.AddTrait(nodeUUID(i), engine.OwnerNova); err != nil {
			t.Fatal(err)
		}
	}
	r.cleanCycle() // re-reads the two
	// nova 34 reported node 3 first: its provider, with OWNER_NOVA.
	if err := r.fake.CreateProvider(nodeUUID(3), nodeUUID(3)); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(nodeUUID(3), engine.OwnerNova); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes = fleet(4) })
	rep := r.cleanCycle()
	if rep.ForeignRewrites != 0 || rep.Created != 0 || rep.Updated != 1 {
		t.Fatalf("beside nova 34: %+v", rep)
	}
	for i := range 4 {
		p := r.provider(nodeUUID(i))
		if slices.Contains(p.Traits, engine.OwnerNova) != (i != 2) || !slices.Contains(p.Traits, r.ownerT) {
			t.Errorf("node %d: traits %v", i, p.Traits)
		}
	}
	if rep = r.cleanCycle(); rep.Updated+rep.Created != 0 || rep.ForeignRewrites != 0 {
		t.Fatalf("idle beside nova 34: %+v", rep)
	}
}

// Alone, provider.marker_traits may carry OWNER_NOVA so that a nova ≥ 34
// scheduler offers the engine's providers; a provider nova owns (OWNER_NOVA
// without this engine's marker) is still refused.
func TestOwnerNovaAsMarkerAlone(t *testing.T) {
	r := newRig(t, 2)
	r.pol.MarkerTraits = []string{"COMPUTE_NODE", engine.OwnerNova}
	r.restart()
	r.cleanCycle()
	for i := range 2 {
		if p := r.provider(nodeUUID(i)); !slices.Contains(p.Traits, engine.OwnerNova) {
			t.Fatalf("node %d: traits %v", i, p.Traits)
		}
	}
	if rep := r.cleanCycle(); rep.Updated+rep.Created != 0 {
		t.Fatalf("idle with OWNER_NOVA as a marker: %+v", rep)
	}
	if err := r.fake.CreateProvider(nodeUUID(2), nodeUUID(2)); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(nodeUUID(2), engine.OwnerNova); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes = fleet(3) })
	rep := r.cycle()
	if len(rep.Errors) != 1 || rep.Errors[0].Kind != engine.ErrOwned {
		t.Fatalf("nova's own provider: %+v", rep.Errors)
	}
}

// A plan beside nova lists the holds a cycle would place and release, and
// writes nothing: not the holds, not the book.
func TestPlanShowsHolds(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Retired, s.nodes[1].Fault = true, "x" })
	r.cleanCycle()
	r.src.set(func(s *source) { s.nodes[1].Fault, s.nodes[2].Retired = "", true })
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	var ops []string
	for _, w := range plan.Writes {
		ops = append(ops, string(w.Op)+" "+w.UUID)
	}
	want := []string{"hold " + nodeUUID(2), "release_hold " + nodeUUID(1)}
	if !slices.Equal(ops, want) {
		t.Fatalf("plan beside nova: %v, want %v", ops, want)
	}
	for _, q := range r.fake.Requests() {
		if q.Method != "GET" {
			t.Fatalf("a plan wrote: %s %s", q.Method, q.Path)
		}
	}
	if rep := r.cleanCycle(); rep.Nova.Placed != 1 || rep.Nova.Released != 1 {
		t.Fatalf("the cycle after the plan: %+v", rep.Nova)
	}
}

// A node enrolled in a state the engine holds (a fault nova does not
// reserve for) is never offered: its new provider gets its inventory
// together with the hold, in one reshape, not before it.
func TestEnrolledHeldNodeOpensNoWindow(t *testing.T) {
	r := besideRig(t, 2)
	r.cleanCycle()
	windows := r.watchWindows(nodeUUID(2))
	r.src.set(func(s *source) {
		s.nodes = append(s.nodes, fleet(3)[2])
		s.nodes[2].Fault = "power failure"
	})
	rep := r.cleanCycle()
	if rep.Created != 1 || rep.Nova.Placed != 1 || !r.held(nodeUUID(2)) || r.reserved(nodeUUID(2)) != 0 || len(*windows) > 0 {
		t.Fatalf("enrolled in a fault: created %d, %+v, held %v, windows %v", rep.Created, rep.Nova, r.held(nodeUUID(2)), *windows)
	}
	if rep = r.cleanCycle(); rep.Updated+rep.Created+rep.Nova.Placed != 0 {
		t.Fatalf("after the enrolment: %+v %+v", rep, rep.Nova)
	}
}
