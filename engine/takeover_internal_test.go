package engine

import (
	"encoding/json"

	"github.com/rpengine/rpengine/engine/placement"
	"testing"
)

// What a shared entry's observation may replace: only a view at another
// generation, carrying its writer's own marker, and never this engine's
// newer view with its own older entry.
func TestTakeSeenTrustsOnlyItsWritersOwnView(t *testing.T) {
	peer, me := OwnerTrait("peer"), OwnerTrait("me")
	view := func(gen string, traits ...string) *Observed {
		return &Observed{Exists: true, Generation: placement.Generation(gen), Traits: traits}
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
		{"a view of nothing", stored{By: peer, Seen: &Observed{Generation: "9", Traits: []string{peer}}}, false},
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
	if err != nil || a.Seen == nil || a.Seen.Generation != "4" {
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
