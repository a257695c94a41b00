package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// After a lost record, a trait the source dropped stays; Strays lists it
// and an operator's own trait (nothing explains either), and Reown
// removes only what it is given, recording it as the engine's.
func TestReownRemovesOnlyWhatItIsGiven(t *testing.T) {
	r := newRig(t, 3)
	r.src.set(func(s *source) { s.nodes = withGPU(s.nodes, true) })
	r.cleanCycle()
	if err := r.fake.AddTrait(nodeUUID(1), "CUSTOM_OPERATOR"); err != nil {
		t.Fatal(err)
	}
	r.state, _ = engine.LoadState("", "") // the record is lost
	r.restart()
	r.src.set(func(s *source) { s.nodes = withGPU(s.nodes, false) })
	r.cleanCycle()
	if !slices.Contains(r.provider(nodeUUID(0)).Traits, "CUSTOM_GPU") {
		t.Fatal("without a record the engine removed a trait: the test tests nothing")
	}
	strays, err := r.eng.Strays(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{nodeUUID(0) + " CUSTOM_GPU", nodeUUID(1) + " CUSTOM_GPU", nodeUUID(1) + " CUSTOM_OPERATOR", nodeUUID(2) + " CUSTOM_GPU"}
	var got []string
	for _, s := range strays {
		got = append(got, s.Node+" "+s.Value)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("strays %v, want %v", got, want)
	}
	var gpu []engine.Stray
	for _, s := range strays {
		if s.Value == "CUSTOM_GPU" {
			gpu = append(gpu, s)
		}
	}
	r.fake.ResetRequests()
	if n, err := r.eng.Reown(context.Background(), gpu); err != nil || n != 3 {
		t.Fatalf("reown: %d, %v", n, err)
	}
	for i := range 3 {
		p := r.provider(nodeUUID(i))
		if slices.Contains(p.Traits, "CUSTOM_GPU") {
			t.Fatalf("node %d keeps CUSTOM_GPU: %v", i, p.Traits)
		}
		if rec, _ := r.state.Record(nodeUUID(i)); !slices.Contains(rec.Managed.Traits, "CUSTOM_GPU") {
			t.Fatalf("node %d: removal not recorded as the engine's: %+v", i, rec)
		}
	}
	if !slices.Contains(r.provider(nodeUUID(1)).Traits, "CUSTOM_OPERATOR") {
		t.Fatal("removed the operator's trait it was not given")
	}
	r.cleanCycle()
	if left, _ := r.eng.Strays(context.Background()); len(left) != 1 || left[0].Value != "CUSTOM_OPERATOR" {
		t.Fatalf("strays after reown: %+v", left)
	}
}
