package engine_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// sent lists the provider writes Placement received, as "op uuid", in
// the plan's terms; traits and resource classes created are left out.
func sent(r *rig) []string {
	var out []string
	for _, q := range r.fake.Requests() {
		seg := strings.Split(strings.Trim(q.Path, "/"), "/")
		switch {
		case q.Method == "POST" && q.Path == "/resource_providers":
			out = append(out, string(engine.OpCreate)+" ?") // the uuid is in the body
		case q.Method == "DELETE" && len(seg) == 2 && seg[0] == "resource_providers":
			out = append(out, string(engine.OpDelete)+" "+seg[1])
		case q.Method == "PUT" && len(seg) == 3 && seg[0] == "resource_providers":
			out = append(out, "set_"+seg[2]+" "+seg[1])
		}
	}
	slices.Sort(out)
	return out
}

// planned lists a plan's writes in the same terms.
func planned(rep engine.Report) []string {
	var out []string
	for _, w := range rep.Writes {
		u := w.UUID
		if w.Op == engine.OpCreate {
			u = "?"
		}
		out = append(out, string(w.Op)+" "+u)
	}
	slices.Sort(out)
	return out
}

// A plan runs the cycle's own code with a recording writer: it sends no
// write, leaves the engine's state as it was, and lists exactly the
// writes the next cycle sends — creates, updates and a proven deletion.
func TestPlanListsTheWritesTheCycleSends(t *testing.T) {
	r := newRig(t, 5)
	r.cleanCycle()
	gone := nodeUUID(4)
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:4]
		s.gone[gone] = true
	})
	r.cleanCycle() // the first proof
	r.src.set(func(s *source) {
		s.nodes[0].Maintenance = true
		s.nodes[1].Traits = []string{"CUSTOM_GPU"}
		s.nodes = append(s.nodes, fleet(7)[5:]...)
	})
	before := r.state.KnownProviders()
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	if len(plan.Errors) > 0 || len(sent(r)) != 0 {
		t.Fatalf("plan errors %v, wrote %v", plan.Errors, sent(r))
	}
	if o := outcomeOf(t, plan, gone); o.Kind != engine.KindDeleted || len(o.Writes) != 1 {
		t.Errorf("planned deletion: %+v", o)
	}
	if after := r.state.KnownProviders(); !slices.Equal(before, after) {
		t.Errorf("a plan changed the state: %v, then %v", before, after)
	}
	r.fake.ResetRequests()
	rep := r.cleanCycle()
	if got, want := sent(r), planned(plan); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("cycle sent %v, plan said %v", got, want)
	}
	if plan.Created != rep.Created || plan.Updated != rep.Updated || plan.Deleted != rep.Deleted || rep.Deleted != 1 {
		t.Errorf("plan %d/%d/%d, cycle %d/%d/%d created/updated/deleted",
			plan.Created, plan.Updated, plan.Deleted, rep.Created, rep.Updated, rep.Deleted)
	}
}

// A provider another engine owns: the plan predicts the cycle's refusal
// (the same error, the same failed outcome, no create), not a create the
// cycle would see refused; and the other writes the plan lists are what
// the cycle sends.
func TestPlanPredictsAnotherEnginesProvider(t *testing.T) {
	r := newRig(t, 4)
	other := engine.OwnerTrait("other")
	theirs := nodeUUID(2)
	if err := r.fake.CreateProvider(theirs, theirs); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.AddTrait(theirs, other); err != nil {
		t.Fatal(err)
	}
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	if w := sent(r); len(w) != 0 {
		t.Fatalf("plan wrote %v", w)
	}
	o := outcomeOf(t, plan, theirs)
	if o.Kind != engine.KindFailed && o.Kind != engine.KindConflict || len(o.Writes) != 0 || !strings.Contains(o.Message, "owned by "+other) {
		t.Errorf("plan of another engine's provider: %+v", o)
	}
	r.fake.ResetRequests()
	rep := r.cycle()
	// The other owner's listing tells the cycle, as the plan, that the
	// provider is not its own: no create is tried; every write it makes,
	// the plan listed.
	refused := 0
	for _, q := range r.fake.Requests() {
		if q.Status >= 400 && q.Method != "GET" {
			refused++
		}
	}
	if got, want := sent(r), planned(plan); refused != 0 || !slices.Equal(got, slices.Sorted(slices.Values(want))) || len(want) != 9 {
		t.Errorf("cycle sent %v (%d refused), plan said %v", got, refused, want)
	}
	// What the plan learnt of the foreign provider is not remembered
	// (quiet.go): the cycle lists it itself, and says what the plan said.
	if c := outcomeOf(t, rep, theirs); c.Kind != o.Kind || c.Message != o.Message {
		t.Errorf("cycle: %s %q, plan: %s %q", c.Kind, c.Message, o.Kind, o.Message)
	}
	if plan.Failed != rep.Failed || plan.Created != rep.Created || len(rep.Errors) != 1 || rep.Errors[0].Message != plan.Errors[0].Message {
		t.Errorf("plan failed %d created %d %v; cycle failed %d created %d %v",
			plan.Failed, plan.Created, plan.ErrorMessages(), rep.Failed, rep.Created, rep.ErrorMessages())
	}
}

// A quarantine (the provider fully reserved on doubt), a pending deletion
// (the first proof) and a node changed beside them: the plan lists the
// writes and the outcomes the cycle then has, node by node.
func TestPlanPredictsQuarantineAndPendingDeletion(t *testing.T) {
	r := newRig(t, 5)
	r.cleanCycle()
	gone := nodeUUID(4)
	r.src.set(func(s *source) {
		s.nodes = s.nodes[:4]
		s.gone[gone] = true
		s.nodes[1].ResourceClass = "" // quarantined
		s.nodes[2].Maintenance = true
	})
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	if w := sent(r); len(w) != 0 {
		t.Fatalf("plan wrote %v", w)
	}
	r.fake.ResetRequests()
	rep := r.cycle()
	if got, want := sent(r), planned(plan); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("cycle sent %v, plan said %v", got, want)
	}
	kinds := func(rep engine.Report) map[string]string {
		out := map[string]string{}
		for _, o := range rep.Outcomes {
			out[o.Node] = string(o.Kind) + " " + o.Reason + " " + o.Reserved
		}
		return out
	}
	got, want := kinds(rep), kinds(plan)
	if !maps.Equal(got, want) || !strings.HasPrefix(want[nodeUUID(1)], string(engine.KindQuarantined)) ||
		!strings.HasPrefix(want[gone], string(engine.KindPendingDeletion)) || !strings.HasPrefix(want[nodeUUID(2)], string(engine.KindUpdated)) {
		t.Errorf("cycle %v\nplan  %v", got, want)
	}
	if !slices.Equal(plan.ErrorMessages(), rep.ErrorMessages()) {
		t.Errorf("errors: cycle %v, plan %v", rep.ErrorMessages(), plan.ErrorMessages())
	}
}

// holdsSent lists the hold writes Placement received: a reshape places a
// hold (with the inventory it guards, one request), a consumer's DELETE
// releases one.
func holdsSent(r *rig) []string {
	var out []string
	for _, q := range r.fake.Requests() {
		switch {
		case q.Method == "POST" && q.Path == "/reshaper":
			out = append(out, string(engine.OpHold))
		case q.Method == "DELETE" && strings.HasPrefix(q.Path, "/allocations/"):
			out = append(out, string(engine.OpReleaseHold))
		}
	}
	slices.Sort(out)
	return out
}

// Beside nova: a hold placed and one released, with the provider writes
// around them, are what the plan said.
func TestPlanPredictsHolds(t *testing.T) {
	r := besideRig(t, 3)
	r.src.set(func(s *source) { s.nodes[0].Fault, s.nodes[1].Fault = "x", "y" })
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[2].Fault = "z" // held from now on
		s.nodes = []hostabi.Node{s.nodes[0], s.nodes[2]}
	})
	r.fake.ResetRequests()
	plan := r.eng.Plan(context.Background())
	if w := append(sent(r), holdsSent(r)...); len(w) != 0 {
		t.Fatalf("plan wrote %v", w)
	}
	var planHolds, planOther []string
	for _, w := range planned(plan) {
		if strings.HasPrefix(w, string(engine.OpHold)+" ") || strings.HasPrefix(w, string(engine.OpReleaseHold)+" ") {
			planHolds = append(planHolds, strings.Fields(w)[0])
		} else {
			planOther = append(planOther, w)
		}
	}
	r.fake.ResetRequests()
	rep := r.cycle()
	if got := holdsSent(r); !slices.Equal(got, planHolds) || len(got) != 2 {
		t.Errorf("cycle sent holds %v, plan said %v", got, planHolds)
	}
	if got := sent(r); !slices.Equal(got, planOther) {
		t.Errorf("cycle sent %v, plan said %v", got, planOther)
	}
	if plan.Nova.Released != rep.Nova.Released || rep.Nova.Released != 1 {
		t.Errorf("released: plan %d, cycle %d", plan.Nova.Released, rep.Nova.Released)
	}
}
