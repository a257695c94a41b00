package engine_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// memStore is a RecordStore in memory that counts its calls and can fail.
type memStore struct {
	mu            sync.Mutex
	entries       map[string][]byte
	loads, stores int
	fail          error
}

func (m *memStore) Load(context.Context) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.fail != nil {
		return nil, m.fail
	}
	return maps.Clone(m.entries), nil
}

func (m *memStore) Store(_ context.Context, put map[string][]byte, del []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stores++
	if m.fail != nil {
		return m.fail
	}
	maps.Copy(m.entries, put)
	for _, u := range del {
		delete(m.entries, u)
	}
	return nil
}

func withGPU(nodes []hostabi.Node, gpu bool) []hostabi.Node {
	out := slices.Clone(nodes)
	for i := range out {
		out[i].Traits = nil
		if gpu {
			out[i].Traits = []string{"CUSTOM_GPU"}
		}
	}
	return out
}

// taker is a second engine on a's fake Placement and fleet, with its own
// empty state, allowed to take a's providers over.
func taker(a *rig, store engine.RecordStore) *rig {
	b := &rig{t: a.t, fake: a.fake, src: a.src, opts: a.opts}
	b.ownerT = engine.OwnerTrait("taker")
	b.pol = engine.Policy{OwnerTrait: b.ownerT, MarkerTraits: []string{"COMPUTE_NODE"},
		MayTakeOver: func(owner string) bool { return owner == a.ownerT }}
	b.state, _ = engine.LoadState("", "")
	b.restart()
	if store != nil {
		b.eng.ShareRecord(store, true)
	}
	return b
}

// A taker that reads the dead engine's shared record removes the trait
// the dead engine added and the source dropped; without it, the trait
// stays for good.
func TestTakeOverRemovesWhatThePreviousHolderAdded(t *testing.T) {
	for _, shared := range []bool{true, false} {
		a := newRig(t, 4)
		store := &memStore{entries: map[string][]byte{}}
		if shared {
			a.eng.ShareRecord(store, false)
		}
		a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, true) })
		a.cleanCycle()
		// a dies; the nodes lose their GPU; b takes over.
		a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, false) })
		var b *rig
		if shared {
			b = taker(a, store)
		} else {
			b = taker(a, nil)
		}
		b.cleanCycle()
		stray := 0
		for i := range 4 {
			p := b.provider(nodeUUID(i))
			if slices.Contains(p.Traits, "CUSTOM_GPU") {
				stray++
			}
			if slices.Contains(p.Traits, a.ownerT) || !slices.Contains(p.Traits, b.ownerT) {
				t.Fatalf("marker not flipped: %v", p.Traits)
			}
		}
		if shared && stray != 0 {
			t.Fatalf("shared record: %d stray CUSTOM_GPU after the take-over", stray)
		}
		if !shared && stray != 4 {
			t.Fatalf("without the shared record %d stray, want 4 (the failure this guards against)", stray)
		}
	}
}

// A record that cannot be stored stops the cycle before any write; an
// idle cycle costs the store nothing.
func TestSharedRecordWrittenBeforeTheWrites(t *testing.T) {
	a := newRig(t, 3)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	if len(store.entries) != 3 || store.loads != 1 {
		t.Fatalf("store after the first cycle: %d entries, %d loads", len(store.entries), store.loads)
	}
	calls := store.stores
	a.cleanCycle()
	if store.stores != calls || store.loads != 1 {
		t.Fatalf("an idle cycle called the store: %d stores, %d loads", store.stores-calls, store.loads)
	}
	store.fail = errors.New("etcd unreachable")
	a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, true) })
	a.fake.ResetRequests()
	rep := a.cycle()
	if w := a.fake.Find("PUT", "/resource_providers/*/*"); len(w) != 0 {
		t.Fatalf("wrote to Placement though the record was not stored: %v", w)
	}
	if len(rep.Errors) == 0 || rep.Errors[0].Kind != engine.ErrState {
		t.Fatalf("errors %+v", rep.Errors)
	}
	store.fail = nil
	a.cleanCycle()
	if !slices.Contains(a.provider(nodeUUID(0)).Traits, "CUSTOM_GPU") {
		t.Fatal("not written once the store works again")
	}
}

// A record kept before the store was (the state file of an engine that
// ran without etcd) reaches the store at the first cycle, idle or not;
// another engine's deletion proofs are not taken over.
func TestSharedRecordFromTheFileAndOthersProofs(t *testing.T) {
	a := newRig(t, 3)
	a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, true) })
	a.cleanCycle()
	store := &memStore{entries: map[string][]byte{
		nodeUUID(0): []byte(`{"by":"CUSTOM_RPENGINE_OWNER_OTHER","Managed":{"Traits":["CUSTOM_GPU"]},"GoneSince":"2026-01-01T00:00:00Z","ProofRound":1}`),
	}}
	a.eng.ShareRecord(store, false)
	a.cleanCycle()
	if len(store.entries) != 3 {
		t.Fatalf("%d entries stored, want the 3 the file held", len(store.entries))
	}
	for uuid, b := range store.entries {
		if !strings.Contains(string(b), `"by":"`+a.ownerT+`"`) || !strings.Contains(string(b), "CUSTOM_GPU") {
			t.Fatalf("entry of %s: %s", uuid, b)
		}
	}
	if rec, _ := a.state.Record(nodeUUID(0)); !rec.GoneSince.IsZero() || rec.ProofRound != 0 {
		t.Fatalf("another engine's proof taken over: %+v", rec)
	}
}

// A plan reads the shared record as the next cycle would: the taker's
// plan removes the trait the dead engine added, as its cycle then does;
// it stores nothing, and leaves the read due for that cycle.
func TestPlanReadsTheSharedRecord(t *testing.T) {
	a := newRig(t, 3)
	store := &memStore{entries: map[string][]byte{}}
	a.eng.ShareRecord(store, false)
	a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, true) })
	a.cleanCycle()
	a.src.set(func(s *source) { s.nodes = withGPU(s.nodes, false) })
	b := taker(a, store)
	loads, stores := store.loads, store.stores
	before := maps.Clone(store.entries)
	plan := b.eng.Plan(context.Background())
	if store.stores != stores || !maps.EqualFunc(before, store.entries, func(x, y []byte) bool { return string(x) == string(y) }) {
		t.Fatalf("the plan stored into the shared record: %d stores", store.stores-stores)
	}
	if store.loads != loads+1 {
		t.Fatalf("the plan read the shared record %d times, want 1", store.loads-loads)
	}
	removes := 0
	for _, o := range plan.Outcomes {
		for _, c := range o.Changes {
			if c.Field == "traits" && slices.Contains(c.Removed, "CUSTOM_GPU") {
				removes++
			}
		}
	}
	if removes != 3 {
		t.Fatalf("the plan removes CUSTOM_GPU from %d providers, want 3: %+v", removes, plan.Outcomes)
	}
	b.cleanCycle()
	if store.loads != loads+2 {
		t.Fatalf("the cycle after the plan did not read the record itself (%d loads)", store.loads-loads)
	}
	for i := range 3 {
		if p := b.provider(nodeUUID(i)); slices.Contains(p.Traits, "CUSTOM_GPU") {
			t.Fatalf("the cycle left CUSTOM_GPU: %v", p.Traits)
		}
	}
}
