package engine

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rpengine/rpengine/engine/placement"
	"testing"
)

// What a shared entry's observation may replace: only a view at another
// generation, carrying its writer's own marker, and never this engine's
// newer view with its own older entry.
func TestTakeSeenTrustsOnlyItsWritersOwnView(t *testing.T) {
	peer, me := OwnerTrait("peer"), OwnerTrait("me")
	view := func(gen string, traits ...string) *seenEntry {
		return &seenEntry{Generation: placement.Generation(gen), Traits: &traits}
	}
	local := Observed{Exists: true, Generation: "5", Traits: []string{me}}
	for _, c := range []struct {
		name string
		st   stored
		took bool
	}{
		{"the peer's view of its own provider", stored{By: peer, Seen: view("9", peer)}, true},
		{"no view", stored{By: peer}, false},
		{"a view without its writer's marker", stored{By: peer, Seen: view("9", "CUSTOM_X")}, false},
		{"a view at the generation already held", stored{By: peer, Seen: view("5", peer)}, false},
		{"our own older entry", stored{By: me, Seen: view("3", me)}, false},
		{"a compact view: the record's traits and its writer's marker", stored{By: peer, Seen: &seenEntry{Generation: "9"}}, true},
		{"a view without a generation", stored{By: peer, Seen: &seenEntry{Traits: &[]string{peer}}}, false},
	} {
		got, took := takeSeen(local, c.st, me)
		if took != c.took || took && got.Generation != c.st.Seen.Generation || !took && got.Generation != local.Generation {
			t.Errorf("%s: took %v, generation %s", c.name, took, got.Generation)
		}
	}
	if _, took := takeSeen(Observed{}, stored{By: me, Seen: view("3", me)}, me); !took {
		t.Error("our own entry not taken by a state that lost its view (a new host)")
	}
}

// A shared entry carries its writer's view only at a generation, and
// decodes back to it.
func TestSharedEntryKeepsTheViewAtAGeneration(t *testing.T) {
	s, _ := LoadState("", "")
	s.share(true)
	s.put("a", known{Observed: Observed{Exists: true, Generation: "4", Traits: []string{"X"}}})
	s.put("b", known{Observed: Observed{Exists: true}, Record: Record{Pending: true}})
	put, _, _ := s.takeShared("CUSTOM_RPENGINE_OWNER_ME")
	a, err := decodeStored(put["a"])
	if err != nil || a.Seen == nil || a.Seen.Generation != "4" || !slices.Equal(a.Seen.observed(a.Record, a.By).Traits, []string{"X"}) {
		t.Fatalf("entry a: %+v %v", a, err)
	}
	var b map[string]json.RawMessage
	if err := json.Unmarshal(put["b"], &b); err != nil || b["seen"] != nil {
		t.Fatalf("entry b has a view without a generation: %s %v", put["b"], err)
	}
	// A view at an unchanged generation marks nothing to store again.
	s.put("a", known{Observed: Observed{Exists: true, Generation: "4", Traits: []string{"X"}}})
	if put, _, _ := s.takeShared("CUSTOM_RPENGINE_OWNER_ME"); len(put) != 0 {
		t.Fatalf("stored again at the same generation: %v", put)
	}
}

// An entry whose view would make it larger than maxSeenEntry is stored
// without the view, so a Kubernetes ConfigMap of entries stays bounded.
func TestSharedEntryDropsALargeView(t *testing.T) {
	s, _ := LoadState("", "")
	s.share(true)
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("CUSTOM_TRAIT_%02d", i))
	}
	s.put("small", known{Observed: Observed{Exists: true, Generation: "4", Traits: []string{"X"}}})
	s.put("large", known{Observed: Observed{Exists: true, Generation: "4", Traits: many}})
	put, _, _ := s.takeShared("CUSTOM_RPENGINE_OWNER_ME")
	small, _ := decodeStored(put["small"])
	large, err := decodeStored(put["large"])
	if err != nil || small.Seen == nil || large.Seen != nil || len(put["large"]) > maxSeenEntry {
		t.Fatalf("small seen %v; large seen %v, %d bytes, %v", small.Seen != nil, large.Seen != nil, len(put["large"]), err)
	}
}

// A view whose lists are what the record says is stored without them,
// and stands for the same provider.
func TestSharedEntryLeavesOutWhatTheRecordSays(t *testing.T) {
	me := OwnerTrait("me")
	r := Record{Managed: Managed{Traits: []string{"CUSTOM_GPU", "COMPUTE_NODE"}, Aggregates: []string{"agg"}}}
	o := Observed{Exists: true, Generation: "7", Traits: []string{"COMPUTE_NODE", "CUSTOM_GPU", me}, Aggregates: []string{"agg"},
		Inventory: map[string]placement.Inventory{"CUSTOM_GOLD": {Total: 1, MaxUnit: 1, MinUnit: 1, StepSize: 1, AllocationRatio: 1}}}
	e := seenOf(o, r, me)
	if e.Traits != nil || e.Aggregates != nil {
		t.Fatalf("lists kept though the record says them: %+v", e)
	}
	if back := e.observed(r, me); !sameSet(back.Traits, o.Traits) || !sameSet(back.Aggregates, o.Aggregates) || back.Generation != "7" {
		t.Fatalf("view read back as %+v", back)
	}
	o.Traits = append(o.Traits, "CUSTOM_OPERATOR")
	o.Aggregates = nil
	e = seenOf(o, r, me)
	if back := e.observed(r, me); !sameSet(back.Traits, o.Traits) || len(back.Aggregates) != 0 {
		t.Fatalf("view with an extra trait and no aggregate read back as %+v", back)
	}
}
