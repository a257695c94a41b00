package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// writesTo lists the providers the requests since from wrote to.
func writesTo(r *rig, from int) []string {
	var out []string
	for _, req := range r.fake.Requests()[from:] {
		if req.Method == "GET" {
			continue
		}
		if p := strings.Split(req.Path, "/"); len(p) > 2 && p[1] == "resource_providers" {
			out = append(out, p[2])
		} else if req.Path == "/resource_providers" {
			out = append(out, "create")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A cycle limited to two nodes (one by uuid, one by name) writes their
// providers alone, as a full cycle would: the other changed node is left
// for the next full cycle, the vanished node's provider is neither
// deleted nor reserved, and the listing order is a cycle's.
func TestCycleOnlyWritesTheNamedNodesAlone(t *testing.T) {
	r := newRig(t, 10)
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[3].Maintenance = true
		s.nodes[5].Maintenance = true
		s.nodes = slices.Delete(s.nodes, 9, 10) // node 9 deleted
		s.nodes = append(s.nodes, hostabi.Node{UUID: nodeUUID(20), Name: "rack1-n20", ResourceClass: "baremetal-gold",
			PowerState: "power on", ProvisionState: "available"})
		s.instances = append(s.instances, hostabi.Instance{UUID: "11111111-1111-4111-8111-111111111111", NodeUUID: nodeUUID(5)})
		s.calls = nil
	})
	before := len(r.fake.Requests())
	rep := r.eng.CycleOnly(context.Background(), []string{strings.ToUpper(nodeUUID(3)), "rack1-n20"})
	if len(rep.Errors) > 0 || len(rep.Unknown) > 0 {
		t.Fatalf("errors %v, unknown %v", rep.Errors, rep.Unknown)
	}
	if rep.Nodes != 2 || rep.Instances != 0 || rep.Created != 1 || rep.Updated != 1 || rep.Deleted != 0 {
		t.Fatalf("nodes %d instances %d created %d updated %d deleted %d; want 2 0 1 1 0",
			rep.Nodes, rep.Instances, rep.Created, rep.Updated, rep.Deleted)
	}
	if got := r.src.calls; !slices.Equal(got, []string{"nodes", "instances"}) {
		t.Fatalf("source calls %v: nodes, then instances", got)
	}
	if got, want := writesTo(r, before), []string{nodeUUID(3), nodeUUID(20), "create"}; !slices.Equal(got, want) {
		t.Fatalf("wrote to %v, want only %v", got, want)
	}
	if r.reserved(nodeUUID(3)) != 1 || r.reserved(nodeUUID(5)) != 0 || r.reserved(nodeUUID(9)) != 0 {
		t.Fatalf("reserved: 3 %d (want 1), 5 %d (want 0: not named), 9 %d (want 0: not named)",
			r.reserved(nodeUUID(3)), r.reserved(nodeUUID(5)), r.reserved(nodeUUID(9)))
	}
	full := r.cleanCycle()
	if full.Created != 0 || full.Updated != 1 {
		t.Fatalf("the full cycle after created %d, updated %d; want 0 and 1 (node 5 only)", full.Created, full.Updated)
	}
}

// An unknown node, or one outside the engine's scope, is reported and
// nothing at all is written, even for the nodes that were found.
func TestCycleOnlyUnknownNodeWritesNothing(t *testing.T) {
	r := newRig(t, 6)
	r.pol.Scope = engine.Scope{Partitions: 2, Held: []int{0}}
	r.restart()
	r.cleanCycle()
	var mine, theirs string
	for i := range 6 {
		if engine.Partition(nodeUUID(i), 2) == 0 && mine == "" {
			mine = nodeUUID(i)
		} else if engine.Partition(nodeUUID(i), 2) == 1 && theirs == "" {
			theirs = nodeUUID(i)
		}
	}
	r.src.set(func(s *source) {
		for i := range s.nodes {
			s.nodes[i].Maintenance = true
		}
	})
	before := len(r.fake.Requests())
	rep := r.eng.CycleOnly(context.Background(), []string{mine, "nosuch", theirs})
	if !slices.Equal(rep.Unknown, []string{"nosuch", theirs}) {
		t.Fatalf("unknown %v, want [nosuch %s]", rep.Unknown, theirs)
	}
	if w := writesTo(r, before); len(w) > 0 {
		t.Fatalf("wrote to %v with an unknown node asked", w)
	}
}

// Beside nova, a cycle limited to one node places that node's hold, and
// releases it when the condition ends, and leaves another node's as it is.
func TestCycleOnlyBesideNovaHoldsTheNamedNode(t *testing.T) {
	r := besideRig(t, 4)
	r.src.set(func(s *source) { s.nodes[1].Retired = true })
	r.cleanCycle()
	r.src.set(func(s *source) {
		s.nodes[0].Retired = true
		s.nodes[1].Retired = false
		s.nodes[2].Retired = true
	})
	rep := r.eng.CycleOnly(context.Background(), []string{nodeUUID(0)})
	if len(rep.Errors) > 0 || !r.held(nodeUUID(0)) || !r.held(nodeUUID(1)) || r.held(nodeUUID(2)) {
		t.Fatalf("errors %v; held 0 %v (want true), 1 %v (want true: not named), 2 %v (want false: not named)",
			rep.Errors, r.held(nodeUUID(0)), r.held(nodeUUID(1)), r.held(nodeUUID(2)))
	}
	rep = r.eng.CycleOnly(context.Background(), []string{nodeUUID(1)})
	if len(rep.Errors) > 0 || r.held(nodeUUID(1)) || !r.held(nodeUUID(0)) {
		t.Fatalf("errors %v; held 1 %v (want false: released), 0 %v (want true)", rep.Errors, r.held(nodeUUID(1)), r.held(nodeUUID(0)))
	}
	r.cleanCycle()
	if !r.held(nodeUUID(2)) {
		t.Fatal("the full cycle did not hold node 2")
	}
}
