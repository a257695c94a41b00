package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// New custom traits and resource classes are created at most NewNames per
// cycle; the rest wait, reported in one line, and the providers converge
// over the next cycles.
func TestNewNamesPerCycleAreCapped(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: fake.URL(), Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []hostabi.Node
	for i := range 3 {
		n := hostabi.Node{UUID: nodeUUID(i), ResourceClass: fmt.Sprintf("class-%d", i)}
		for j := range 8 {
			n.Traits = append(n.Traits, fmt.Sprintf("CUSTOM_N%d_T%d", i, j))
		}
		nodes = append(nodes, n)
	}
	src := &source{nodes: nodes}
	eng := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait("budget")}, engine.Options{Concurrency: 1, NewNames: 10}, nil, nil)
	// 1 owner trait + 3 classes + 24 traits = 28 new names: three cycles.
	for cycle := 1; cycle <= 3; cycle++ {
		fake.ResetRequests()
		r := eng.Cycle(context.Background())
		if got := namesCreated(fake); got > 10 {
			t.Fatalf("cycle %d created %d names, budget 10", cycle, got)
		}
		waits := 0
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "wait for later cycles") {
				waits++
			} else {
				t.Errorf("cycle %d: unexpected error %q", cycle, e)
			}
		}
		if cycle < 3 && waits != 1 || cycle == 3 && waits != 0 {
			t.Fatalf("cycle %d: errors %q, want exactly one budget line until the last", cycle, r.Errors)
		}
	}
	r := eng.Cycle(context.Background())
	if len(r.Errors) > 0 || r.Unchanged != 3 {
		t.Fatalf("after convergence: %+v", r)
	}
	for _, n := range nodes {
		_, traits, err := pc.Traits(context.Background(), n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range n.Traits {
			if !strings.Contains(strings.Join(traits, ","), want) {
				t.Errorf("provider %s lacks %s: %v", n.UUID, want, traits)
			}
		}
	}
}

// namesCreated counts the traits and resource classes the engine PUT.
func namesCreated(fake *placementfake.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == "PUT" && (strings.HasPrefix(r.Path, "/traits/") || strings.HasPrefix(r.Path, "/resource_classes/")) {
			n++
		}
	}
	return n
}
