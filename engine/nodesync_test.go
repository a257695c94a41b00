package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// ReadNodes and ReadInstances make the test source an engine.NodeReader:
// the nodes asked, as the listing has them.
func (s *source) ReadNodes(_ context.Context, uuids []string) ([]hostabi.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "read_nodes")
	var out []hostabi.Node
	for _, n := range s.nodes {
		if slices.Contains(uuids, strings.ToLower(n.UUID)) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (s *source) ReadInstances(_ context.Context, uuids []string) ([]hostabi.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "read_instances")
	var out []hostabi.Instance
	for _, in := range s.instances {
		if slices.Contains(uuids, strings.ToLower(in.NodeUUID)) {
			out = append(out, in)
		}
	}
	return out, nil
}

// A node sync writes exactly what a full cycle would for the nodes asked
// (a cycle right after it has nothing left to write), reads nodes before
// instances, and ignores what hints get wrong: a duplicated uuid costs
// nothing, an unchanged node no write, a forged uuid and a deleted node
// no write at all (a full cycle is asked for instead), and nothing is
// ever deleted.
func TestSyncNodesWritesWhatACycleWould(t *testing.T) {
	r := newRig(t, 20)
	r.cleanCycle()
	const forged = "6a1b0c3e-0000-4000-8000-00000000abcd"
	r.src.set(func(s *source) {
		s.nodes[3].Maintenance = true
		s.nodes = append(s.nodes, hostabi.Node{UUID: nodeUUID(20), ResourceClass: "baremetal-gold", PowerState: "power on", ProvisionState: "available"})
		s.instances = append(s.instances, hostabi.Instance{UUID: "11111111-1111-4111-8111-111111111111", NodeUUID: nodeUUID(4)})
		s.nodes = slices.Delete(s.nodes, 9, 10) // node 9 deleted
		s.calls = nil
	})
	before := len(r.fake.Requests())
	rep := r.eng.SyncNodes(context.Background(), r.src, []string{nodeUUID(3), nodeUUID(20), strings.ToUpper(nodeUUID(3)),
		forged, nodeUUID(7), nodeUUID(4), nodeUUID(9)})
	if rep.Asked != 6 || rep.Read != 4 || !slices.Equal(rep.Missing, []string{nodeUUID(9), forged}) {
		t.Fatalf("asked %d, read %d, missing %v; want 6, 4, [9 forged]", rep.Asked, rep.Read, rep.Missing)
	}
	if rep.FullCycle == "" || len(rep.Errors) > 0 {
		t.Fatalf("full cycle %q, errors %v: want one asked for the missing nodes, and no error", rep.FullCycle, rep.Errors)
	}
	slices.Sort(rep.Written)
	if want := []string{nodeUUID(3), nodeUUID(4), nodeUUID(20)}; !slices.Equal(rep.Written, want) {
		t.Fatalf("written %v, want %v (7 unchanged, 9 and the forged uuid never)", rep.Written, want)
	}
	if got := r.src.calls; !slices.Equal(got, []string{"read_nodes", "read_instances"}) {
		t.Fatalf("source calls %v: nodes, then instances", got)
	}
	for _, req := range r.fake.Requests()[before:] {
		if req.Method == "DELETE" || strings.Contains(req.Path, forged) || strings.Contains(req.Path, nodeUUID(7)) {
			t.Errorf("node sync sent %s %s", req.Method, req.Path)
		}
	}
	if r.reserved(nodeUUID(3)) != 1 || r.reserved(nodeUUID(4)) != 1 || r.reserved(nodeUUID(20)) != 0 {
		t.Fatalf("reserved: 3 (maintenance) %d, 4 (instance) %d, 20 (new) %d", r.reserved(nodeUUID(3)), r.reserved(nodeUUID(4)), r.reserved(nodeUUID(20)))
	}
	r.provider(nodeUUID(9)) // still there: deletion is a full cycle's, on proof
	full := r.cleanCycle()
	if full.Created+full.Updated != 0 {
		t.Fatalf("the full cycle after the node sync wrote %d creates, %d updates: the sync left work undone or did otherwise",
			full.Created, full.Updated)
	}
	again := r.eng.SyncNodes(context.Background(), r.src, []string{nodeUUID(3), nodeUUID(3), nodeUUID(20)})
	if len(again.Written) != 0 || again.FullCycle != "" {
		t.Fatalf("a duplicate hint wrote %v, asked a full cycle %q", again.Written, again.FullCycle)
	}
}

// Nodes out of the engine's scope are read but never written.
func TestSyncNodesKeepsToScope(t *testing.T) {
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
	rep := r.eng.SyncNodes(context.Background(), r.src, []string{mine, theirs})
	if rep.OutOfScope != 1 || !slices.Equal(rep.Written, []string{mine}) {
		t.Fatalf("out of scope %d, written %v; want 1 and only %s", rep.OutOfScope, rep.Written, mine)
	}
	if _, ok := r.fake.Provider(theirs); ok {
		t.Fatalf("a provider was written for %s, outside the engine's partitions", theirs)
	}
}
