package engine_test

import (
	"context"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// A node sync runs while a full cycle lists the source, and the cycle,
// whose listing is older, leaves what the node sync wrote: the node put
// in maintenance stays reserved, and the node enrolled meanwhile is not
// taken for one that left the scope.
func TestNodeSyncDuringCycleListingWins(t *testing.T) {
	r := newRig(t, 10)
	r.cleanCycle()
	var sync engine.NodeSyncReport
	r.src.set(func(s *source) {
		s.duringNodes = func(s *source) {
			s.set(func(s *source) {
				s.nodes[3].Maintenance = true
				s.nodes = append(s.nodes, hostabi.Node{UUID: nodeUUID(20), ResourceClass: "baremetal-gold",
					PowerState: "power on", ProvisionState: "available"})
				s.duringNodes = nil
			})
			sync = r.eng.SyncNodes(context.Background(), r.src, []string{nodeUUID(3), nodeUUID(20)})
		}
	})
	rep := r.cleanCycle()
	if len(sync.Written) != 2 || len(sync.Errors) > 0 {
		t.Fatalf("node sync during the listing wrote %v, errors %v; want both nodes", sync.Written, sync.Errors)
	}
	if rep.LeftToNodeSyncs != 1 {
		t.Errorf("cycle left %d providers to the node sync, want 1 (node 3; node 20 it never listed)", rep.LeftToNodeSyncs)
	}
	if got := r.reserved(nodeUUID(3)); got != 1 {
		t.Errorf("node 3 (maintenance, synced after the listing began): reserved %d, want 1", got)
	}
	if got := r.reserved(nodeUUID(20)); got != 0 {
		t.Errorf("node 20 (enrolled during the listing): reserved %d, want 0", got)
	}
	if rep := r.cleanCycle(); rep.Updated+rep.Created != 0 || r.reserved(nodeUUID(3)) != 1 {
		t.Errorf("the next cycle wrote %d: the node sync's writes were not what a cycle writes", rep.Updated+rep.Created)
	}
}

// lateReader reads nodes, then lets a full cycle run before the node
// sync it serves goes on to write: a node sync whose read is older than
// a full cycle that has written.
type lateReader struct {
	*source
	after func()
}

func (l lateReader) ReadNodes(ctx context.Context, uuids []string) ([]hostabi.Node, error) {
	nodes, err := l.source.ReadNodes(ctx, uuids)
	l.after()
	return nodes, err
}

// A node sync whose read is older than a full cycle that wrote before it
// writes nothing: the node the cycle reserved stays reserved.
func TestNodeSyncOutrunByLaterCycleWritesNothing(t *testing.T) {
	r := newRig(t, 10)
	r.cleanCycle()
	late := lateReader{source: r.src, after: func() {
		r.src.set(func(s *source) { s.nodes[3].Maintenance = true })
		r.cleanCycle()
	}}
	rep := r.eng.SyncNodes(context.Background(), late, []string{nodeUUID(3)})
	if !rep.Outrun || len(rep.Written) != 0 {
		t.Fatalf("outrun %v, written %v: want a node sync that writes nothing", rep.Outrun, rep.Written)
	}
	if got := r.reserved(nodeUUID(3)); got != 1 {
		t.Errorf("node 3: reserved %d after the older node sync, want 1 (the cycle's newer view)", got)
	}
}

// A node the source no longer returns is fully reserved by the node sync
// that asked for it, at once (the doubt of a first proof), and is not
// deleted; when the source returns it again, the next sync releases it.
func TestNodeSyncReservesAGoneNodeAtOnce(t *testing.T) {
	r := newRig(t, 5)
	r.cleanCycle()
	var kept hostabi.Node
	r.src.set(func(s *source) { kept = s.nodes[2]; s.nodes = append(s.nodes[:2], s.nodes[3:]...) })
	rep := r.eng.SyncNodes(context.Background(), r.src, []string{nodeUUID(2)})
	if len(rep.Errors) > 0 || rep.FullCycle == "" {
		t.Fatalf("errors %v, full cycle %q: want none, and a full cycle asked for", rep.Errors, rep.FullCycle)
	}
	if got := r.reserved(nodeUUID(2)); got != 1 {
		t.Fatalf("gone node: reserved %d right after the node sync, want 1", got)
	}
	if len(r.fake.Find("DELETE", "/resource_providers/"+nodeUUID(2))) > 0 {
		t.Fatal("a node sync deleted a provider")
	}
	r.src.set(func(s *source) { s.nodes = append(s.nodes, kept) })
	if rep := r.eng.SyncNodes(context.Background(), r.src, []string{nodeUUID(2)}); len(rep.Written) != 1 || r.reserved(nodeUUID(2)) != 0 {
		t.Fatalf("node back: written %v, reserved %d; want it released", rep.Written, r.reserved(nodeUUID(2)))
	}
}
