package engine_test

import (
	"context"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// reads counts the per-provider reads of uuid (all of them when "").
func reads(r *rig, uuid string) int {
	n := 0
	for _, part := range []string{"inventories", "traits", "aggregates"} {
		for _, q := range r.fake.Find("GET", "/resource_providers/*/"+part) {
			if uuid == "" || q.Path == "/resource_providers/"+uuid+"/"+part {
				n++
			}
		}
	}
	return n
}

// A taker trusts what the departed owner's shared entry saw while
// Placement lists the same generation: it reads nothing of those
// providers and flips each marker with one write. One another writer
// changed since is read, and its foreign trait kept.
func TestTakeOverTrustsTheRecordWhileTheGenerationHolds(t *testing.T) {
	a := newRig(t, 6)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	moved := nodeUUID(3)
	if err := a.fake.AddTrait(moved, "CUSTOM_OPERATOR"); err != nil {
		t.Fatal(err)
	}
	b := taker(a, store)
	a.fake.ResetRequests()
	if rep := b.cleanCycle(); rep.Updated != 6 {
		t.Fatalf("take-over report %+v", rep)
	}
	if n, m := reads(a, ""), reads(a, moved); n != m || m == 0 {
		t.Fatalf("%d provider reads, %d of them of the provider changed since the record; want only those, at least one", n, m)
	}
	if w := a.fake.Find("PUT", "/resource_providers/*/traits"); len(w) != 6 {
		t.Fatalf("%d trait writes, want one a provider", len(w))
	}
	if c := a.fake.Find("POST", "/resource_providers"); len(c) != 0 {
		t.Fatalf("take-over tried %d creates", len(c))
	}
	for i := range 6 {
		p := a.provider(nodeUUID(i))
		if slices.Contains(p.Traits, a.ownerT) || !slices.Contains(p.Traits, b.ownerT) {
			t.Fatalf("marker not flipped on %d: %v", i, p.Traits)
		}
	}
	if p := a.provider(moved); !slices.Contains(p.Traits, "CUSTOM_OPERATOR") {
		t.Fatalf("the operator's trait was dropped: %v", p.Traits)
	}
	// The next cycle is idle: what the take-over wrote is its own view.
	a.fake.ResetRequests()
	if rep := b.cleanCycle(); rep.Unchanged != 6 || len(a.fake.Requests()) > 2 {
		t.Fatalf("cycle after the take-over: %+v, %v", rep, paths(a))
	}
}

// A node whose source changed while its owner was dead is written as it
// is now, though its provider is trusted from the record: the plan is
// made from the source's fresh listing, and a node to reserve is
// reserved before its marker flips.
func TestTakeOverFromTheRecordWritesWhatChangedMeanwhile(t *testing.T) {
	a := newRig(t, 4)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	a.src.set(func(s *source) {
		s.nodes = withGPU(s.nodes, true)
		s.nodes[2].Maintenance = true
	})
	b := taker(a, store)
	a.fake.ResetRequests()
	b.cleanCycle()
	if n := reads(a, ""); n != 0 {
		t.Fatalf("%d provider reads, want none", n)
	}
	// The node now in maintenance is reserved before its marker flips.
	var order []string
	for _, q := range a.fake.Requests() {
		if q.Method == "PUT" && strings.HasPrefix(q.Path, "/resource_providers/"+nodeUUID(2)+"/") {
			order = append(order, path.Base(q.Path))
		}
	}
	if !slices.Equal(order, []string{"inventories", "traits"}) {
		t.Fatalf("writes of the node in maintenance: %v, want the inventory first", order)
	}
	if inv := a.provider(nodeUUID(2)).Inventories; len(inv) == 0 || inv["CUSTOM_BAREMETAL_GOLD"].Reserved != inv["CUSTOM_BAREMETAL_GOLD"].Total {
		t.Fatalf("node in maintenance not reserved: %+v", inv)
	}
	for i := range 4 {
		if p := a.provider(nodeUUID(i)); !slices.Contains(p.Traits, "CUSTOM_GPU") || !slices.Contains(p.Traits, b.ownerT) {
			t.Fatalf("node %d: %v", i, p.Traits)
		}
	}
}

// A new process with no state, beside providers another engine owns and
// may keep: one listing of the owner markers and one of that owner's
// providers replace a create, a lookup and three reads a provider.
func TestRestartBesideAnotherOwnerListsInsteadOfReading(t *testing.T) {
	o := newRig(t, 50)
	o.cleanCycle() // "test" owns them all
	me := &rig{t: t, fake: o.fake, src: o.src, opts: o.opts}
	me.ownerT = engine.OwnerTrait("me")
	me.pol = engine.Policy{OwnerTrait: me.ownerT, MarkerTraits: []string{"COMPUTE_NODE"}}
	me.state, _ = engine.LoadState("", "")
	me.restart()
	o.fake.ResetRequests()
	rep := me.cycle()
	if rep.Failed != 50 || rep.Created+rep.Updated != 0 {
		t.Fatalf("report %+v", rep)
	}
	if n := len(o.fake.Requests()); n > 3 {
		t.Fatalf("first cycle of a new process: %d requests, want at most 3: %v", n, paths(o))
	}
}

func paths(r *rig) []string {
	var out []string
	for _, q := range r.fake.Requests() {
		out = append(out, fmt.Sprintf("%s %s?%s %d", q.Method, q.Path, q.Query, q.Status))
	}
	return out
}

// A take-over writes first the providers whose node must change in
// Placement (here one put in maintenance while no engine held it), then
// flips the markers of the rest: on a slow Placement the flips take
// seconds, and the scheduler must not wait for them.
func TestTakeOverReservesBeforeItFlipsTheRest(t *testing.T) {
	a := newRig(t, 8)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	a.src.set(func(s *source) { s.nodes[6].Maintenance = true })
	a.opts.Concurrency = 1 // the taker's order, one write at a time
	b := taker(a, store)
	a.fake.ResetRequests()
	b.cleanCycle()
	var puts []string
	for _, q := range a.fake.Requests() {
		if q.Method == "PUT" && strings.HasPrefix(q.Path, "/resource_providers/") {
			puts = append(puts, q.Path)
		}
	}
	want := "/resource_providers/" + nodeUUID(6) + "/inventories"
	if len(puts) != 9 || puts[0] != want {
		t.Fatalf("take-over writes %v: want %s first, then the 8 flips", puts, want)
	}
}

// A node sync waiting for a take-over's writes is let in once the
// take-over has flipped markers for a second (a clock the test moves):
// the cycle leaves the other flips to the next (counted, asked for at
// once), which takes them over.
func TestTakeOverYieldsItsFlipsToAWaitingNodeSync(t *testing.T) {
	a := newRig(t, 120)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a.opts.Clock = clock
	b := taker(a, store)
	a.fake.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/traits", Delay: 20 * time.Millisecond})
	a.fake.ResetRequests()
	done := make(chan engine.Report, 1)
	go func() { done <- b.cycle() }()
	for len(a.fake.Find("PUT", "/resource_providers/*/traits")) < 8 { // the flips under way
		runtime.Gosched()
	}
	clock.add(2 * time.Second)
	a.src.set(func(s *source) { s.nodes[0].Maintenance = true })
	synced := b.eng.SyncNodes(context.Background(), b.src, []string{nodeUUID(0)}) // waits for the cycle's writes
	rep := <-done
	a.fake.ClearFaults()
	if rep.TakeOverLeft == 0 || rep.TakeOverLeft+rep.Updated != 120 {
		t.Fatalf("take-over: updated %d, left %d to the next cycle; want some left, 120 in all", rep.Updated, rep.TakeOverLeft)
	}
	if len(synced.Errors) > 0 || a.reserved(nodeUUID(0)) != 1 {
		t.Fatalf("node sync during the take-over: %+v, reserved %d", synced.Errors, a.reserved(nodeUUID(0)))
	}
	next := b.cleanCycle()
	if next.TakeOverLeft != 0 || next.Updated != rep.TakeOverLeft {
		t.Fatalf("next cycle: updated %d, left %d; want the %d left, none left", next.Updated, next.TakeOverLeft, rep.TakeOverLeft)
	}
}

// A take-over lists the owners it may take over first: the markers of
// engines long gone (20 of them here, listed before the dead peer's)
// cost no listing once its providers are found.
func TestTakeOverListsItsPeersBeforeOtherOwners(t *testing.T) {
	a := newRig(t, 6)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	const stray = "0a0a0a0a-0000-4000-8000-000000000001"
	if err := a.fake.CreateProvider(stray, stray); err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // before "…_TEST" in any order by name
		if err := a.fake.AddTrait(stray, fmt.Sprintf("CUSTOM_RPENGINE_OWNER_GONE%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b := taker(a, store)
	a.fake.ResetRequests()
	if rep := b.cleanCycle(); rep.Updated != 6 {
		t.Fatalf("take-over: %+v", rep)
	}
	var listings []string
	for _, q := range a.fake.Find("GET", "/resource_providers") {
		if strings.Contains(q.Query, "required=") {
			listings = append(listings, q.Query)
		}
	}
	if len(listings) != 2 { // its own marker's, the dead peer's
		t.Fatalf("take-over listed %d owners' providers: %v; want its own and the dead peer's", len(listings), listings)
	}
}

// A provider first seen as a live peer's, left alone, and later given up
// by the fleet (the peer died) is taken over from the generation listed
// this cycle like any other: a marker flip, no refused create, lookup or
// read (the record has what the peer saw). The quiet book knew them, so
// the cycle did not list them as unknown, and each one cost a refused
// create, a lookup, three reads and the flip.
func TestTakeOverOfProvidersSeenWhileTheirOwnerLived(t *testing.T) {
	a := newRig(t, 20)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	var dead bool
	me := &rig{t: t, fake: a.fake, src: a.src, opts: a.opts}
	me.ownerT = engine.OwnerTrait("me")
	me.pol = engine.Policy{OwnerTrait: me.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
		MayTakeOver: func(owner string) bool { return dead && owner == a.ownerT }}
	me.state, _ = engine.LoadState("", "")
	me.restart()
	me.eng.ShareRecord(store, true)
	if rep := me.cycle(); rep.Failed != 20 {
		t.Fatalf("beside a live owner: %+v", rep)
	}
	dead = true
	a.fake.ResetRequests()
	if rep := me.cleanCycle(); rep.Updated != 20 {
		t.Fatalf("take-over report %+v", rep)
	}
	if c := a.fake.Find("POST", "/resource_providers"); len(c) != 0 {
		t.Fatalf("take-over tried %d creates: %v", len(c), paths(a))
	}
	if n, w := reads(a, ""), len(a.fake.Find("PUT", "/resource_providers/*/traits")); n != 0 || w != 20 {
		t.Fatalf("take-over of 20 providers: %d reads and %d trait writes, want none and one each: %v", n, w, paths(a))
	}
}

// A node sync between a take-over's assignment and its full cycle reads
// the shared record for its one node; the cycle must still read it for
// the rest. The sync used to take the read that was due, and the cycle
// then read each provider taken over (3 requests more a provider).
func TestTakeOverAfterANodeSyncStillTrustsTheRecord(t *testing.T) {
	a := newRig(t, 6)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	b := taker(a, store)
	if rep := b.eng.SyncNodes(context.Background(), b.src, []string{nodeUUID(0)}); len(rep.Errors) > 0 {
		t.Fatalf("node sync: %v", rep.Errors)
	}
	a.fake.ResetRequests()
	if rep := b.cleanCycle(); rep.Updated != 5 {
		t.Fatalf("take-over report %+v", rep)
	}
	if n := reads(a, ""); n != 0 {
		t.Fatalf("%d provider reads after a node sync, want none: %v", n, paths(a))
	}
}
