package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// In observe mode a node sync reads the nodes asked and plans their
// providers without a write: a node put in maintenance is reported with
// the reserved change the rules would make, a node of ours the source
// no longer returns as pending deletion, and a provider named as a node
// the source does not return and no engine's (nova's) as unowned; the
// fake Placement sees no PUT, POST or DELETE, and Written stays empty.
func TestObserveNodesPlansWithoutWriting(t *testing.T) {
	r := newRig(t, 6)
	r.cleanCycle()
	const stranger = "0dead000-0000-4000-8000-000000000001"
	if err := r.fake.CreateProvider(stranger, stranger); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) {
		s.nodes[3].Maintenance = true
		s.nodes = slices.Delete(s.nodes, 5, 6) // node 5 deleted
	})
	r.fake.ResetRequests()
	rep := r.eng.ObserveNodes(context.Background(), r.src, []string{nodeUUID(3), nodeUUID(5), stranger, nodeUUID(1)})
	for _, req := range r.fake.Requests() {
		if req.Method != "GET" {
			t.Errorf("observe node sync sent %s %s", req.Method, req.Path)
		}
	}
	if len(rep.Errors) > 0 || len(rep.Written) > 0 {
		t.Fatalf("errors %v, written %v: want none", rep.Errors, rep.Written)
	}
	got := map[string]engine.Outcome{}
	for _, o := range rep.Outcomes {
		got[o.Node] = o
	}
	if o := got[nodeUUID(3)]; o.Kind != engine.KindUpdated || !slices.ContainsFunc(o.Changes, func(c engine.Change) bool { return c.Field == "reserved" }) {
		t.Errorf("node 3 (maintenance): %s %v, want updated with a reserved change", o.Kind, o.Changes)
	}
	if o := got[nodeUUID(5)]; o.Kind != engine.KindPendingDeletion {
		t.Errorf("node 5 (deleted, ours): %q %q %s, want %q", o.Kind, o.Reason, o.Message, engine.KindPendingDeletion)
	}
	if o := got[stranger]; o.Kind != engine.KindKept || o.Reason != engine.ReasonUnowned {
		t.Errorf("stranger: %q %q, want kept %q", o.Kind, o.Reason, engine.ReasonUnowned)
	}
	if o := got[nodeUUID(1)]; o.Kind != engine.KindUnchanged {
		t.Errorf("node 1 (no change): %q, want unchanged", o.Kind)
	}
	if r.reserved(nodeUUID(3)) != 0 || r.reserved(nodeUUID(5)) != 0 {
		t.Fatalf("Placement changed: reserved 3 = %d, 5 = %d", r.reserved(nodeUUID(3)), r.reserved(nodeUUID(5)))
	}
}
