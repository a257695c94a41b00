package events

import (
	"slices"
	"testing"
)

// Batches that came while the receiver was busy merge into one, nodes
// once each; past the queue's bound the messages are dropped and the
// batch is Lost (a full cycle covers them), so memory stays bounded; a
// probe's overflow survives the merge.
func TestBatchMerge(t *testing.T) {
	var b Batch
	b.Merge(Batch{Messages: []Message{{Body: []byte("a")}}}, 3)
	b.Merge(Batch{Nodes: []string{"n2", "n1"}, Overflow: "probe: all changed"}, 3)
	b.Merge(Batch{Messages: []Message{{Body: []byte("b")}}, Nodes: []string{"n1"}}, 3)
	if len(b.Messages) != 2 || !slices.Equal(b.Nodes, []string{"n1", "n2"}) || b.Lost || b.Overflow == "" {
		t.Fatalf("merged: %d messages, nodes %v, lost %v, overflow %q", len(b.Messages), b.Nodes, b.Lost, b.Overflow)
	}
	b.Merge(Batch{Messages: []Message{{Body: []byte("c")}, {Body: []byte("d")}}}, 3)
	if !b.Lost || b.Messages != nil || b.Why == "" {
		t.Fatalf("past max: lost %v, %d messages held, why %q", b.Lost, len(b.Messages), b.Why)
	}
	b.Merge(Batch{Messages: []Message{{Body: []byte("e")}}}, 3)
	if b.Messages != nil || !slices.Equal(b.Nodes, []string{"n1", "n2"}) {
		t.Fatalf("a lost batch holds no messages (%d) and keeps its nodes (%v)", len(b.Messages), b.Nodes)
	}
	var big Batch
	big.Merge(Batch{Messages: []Message{{Body: make([]byte, maxHeldBytes+1)}}}, 10)
	if !big.Lost || big.Messages != nil {
		t.Fatalf("past the byte bound: lost %v, %d messages", big.Lost, len(big.Messages))
	}
}
