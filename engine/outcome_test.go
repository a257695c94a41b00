package engine_test

import (
	"context"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// outcomeOf finds a node's outcome in a report.
func outcomeOf(t *testing.T, rep engine.Report, uuid string) engine.Outcome {
	t.Helper()
	for _, o := range rep.Outcomes {
		if o.Node == uuid {
			return o
		}
	}
	t.Fatalf("no outcome for %s in %+v", uuid, rep.Outcomes)
	return engine.Outcome{}
}

// Each node's outcome has its kind, and a deletion counts its proofs.
func TestOutcomesSayWhatHappenedToEachNode(t *testing.T) {
	r := newRig(t, 4)
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = ""; s.nodes[2].Name = "rack1-n2" })
	rep := r.cycle()
	if o := outcomeOf(t, rep, nodeUUID(1)); o.Kind != engine.KindQuarantined || o.Reason != engine.CodeNoClass {
		t.Errorf("quarantined node: %+v", o)
	}
	if o := outcomeOf(t, rep, nodeUUID(2)); o.Kind != engine.KindCreated || o.Name != "rack1-n2" {
		t.Errorf("created node: %+v", o)
	}
	if rep.Schema != engine.ReportSchema || len(rep.Outcomes) != 4 {
		t.Errorf("schema %d, %d outcomes", rep.Schema, len(rep.Outcomes))
	}

	gone := nodeUUID(3)
	r.src.set(func(s *source) { s.nodes[1].ResourceClass = "baremetal-gold"; s.nodes[0].Maintenance = true })
	rep = r.cycle()
	o := outcomeOf(t, rep, nodeUUID(0))
	want := engine.Change{Field: "reserved", Class: "CUSTOM_BAREMETAL_GOLD", From: "0", To: "1"}
	if o.Kind != engine.KindUpdated || o.Reserved != "maintenance" || len(o.Changes) != 1 || o.Changes[0].Field != want.Field ||
		o.Changes[0].From != want.From || o.Changes[0].To != want.To {
		t.Errorf("maintenance: %+v", o)
	}
	if o := outcomeOf(t, rep, nodeUUID(2)); o.Kind != engine.KindUnchanged {
		t.Errorf("idle node: %+v", o)
	}

	r.src.set(func(s *source) { s.nodes = s.nodes[:3] })
	if o := outcomeOf(t, r.cycle(), gone); o.Kind != engine.KindKept || o.Reason != engine.ReasonProofUnknown { // this source never says "present"
		t.Errorf("unlisted, not proven: %+v", o)
	}
	r.src.set(func(s *source) { s.gone[gone] = true })
	if o := outcomeOf(t, r.cycle(), gone); o.Kind != engine.KindPendingDeletion || o.Proof != 1 || o.ProofsNeeded != 2 {
		t.Errorf("first proof: %+v", o)
	}
	plan := r.eng.Plan(context.Background())
	if o := outcomeOf(t, plan, gone); o.Kind != engine.KindDeleted || o.Proof != 2 || len(o.Writes) != 1 {
		t.Errorf("planned deletion: %+v", o)
	}
	if o := outcomeOf(t, r.cycle(), gone); o.Kind != engine.KindDeleted || o.Proof != 2 {
		t.Errorf("second proof: %+v", o)
	}
}

// A provider another engine owns is a conflict, typed as such.
func TestForeignProviderIsAConflictOutcome(t *testing.T) {
	r := newRig(t, 1)
	if err := r.fake.CreateProvider(nodeUUID(0), nodeUUID(0)); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(nodeUUID(0), "OWNER_NOVA"); err != nil {
		t.Fatal(err)
	}
	rep := r.cycle()
	o := outcomeOf(t, rep, nodeUUID(0))
	if o.Kind != engine.KindConflict || len(rep.Errors) != 1 || rep.Errors[0].Kind != engine.ErrOwned || rep.Errors[0].Node != nodeUUID(0) {
		t.Fatalf("outcome %+v errors %+v", o, rep.Errors)
	}
}

// Changes reads as a diff: classes, fields and sets.
func TestChanges(t *testing.T) {
	before := engine.Observed{Exists: true, Traits: []string{"A", "OLD"}}
	ws := []engine.Write{{Op: engine.OpTraits, Traits: []string{"A", "GPU"}}}
	c := engine.Changes(before, ws)
	if len(c) != 1 || c[0].Field != "traits" || len(c[0].Added) != 1 || c[0].Added[0] != "GPU" || c[0].Removed[0] != "OLD" {
		t.Fatalf("%+v", c)
	}
}

// A proven deletion blocked by allocations is a typed outcome and error.
func TestBlockedDeletionOutcome(t *testing.T) {
	r := newRig(t, 2)
	r.cleanCycle()
	u := nodeUUID(1)
	if err := r.fake.Allocate("c0ffee00-0000-4000-8000-000000000001", u, map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}); err != nil {
		t.Fatal(err)
	}
	r.src.set(func(s *source) { s.nodes = s.nodes[:1]; s.gone[u] = true })
	r.cycle()
	rep := r.cycle()
	o := outcomeOf(t, rep, u)
	if o.Kind != engine.KindBlocked || o.Reason != engine.ReasonAllocations || o.Proof != 2 {
		t.Errorf("outcome %+v", o)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Kind != engine.ErrBlocked || rep.Errors[0].Node != u {
		t.Errorf("errors %+v", rep.Errors)
	}
}
