package hostabi

import (
	"math"
	"testing"
)

// NodeRecordsSize is exact, so the SDK sizes its buffer once.
func TestNodeRecordsSizeIsExact(t *testing.T) {
	long := string(make([]byte, 300))
	nodes := []Node{
		{UUID: "u"},
		{UUID: "u2", Name: long, Traits: []string{"A", long}, Maintenance: true,
			Resources: map[string]Resource{"VCPU": {Total: math.MaxInt64, Reserved: -1, MinUnit: math.MinInt64, StepSize: 64, AllocationRatio: 2}}},
	}
	b, ok := AppendNodeRecords(nil, nodes)
	if !ok || len(b) != NodeRecordsSize(nodes) {
		t.Fatalf("ok %v, %d bytes, NodeRecordsSize %d", ok, len(b), NodeRecordsSize(nodes))
	}
	if _, ok := AppendNodeRecords(nil, []Node{{UUID: "u", Resources: map[string]Resource{"X": {AllocationRatio: math.NaN()}}}}); ok {
		t.Fatal("a NaN ratio encoded")
	}
	// rpb1 has no place for them: the SDK answers such a listing in JSON.
	for _, n := range []Node{{UUID: "u", Owner: "p"}, {UUID: "u", Properties: map[string]string{"extra.rack": "r1"}}} {
		if _, ok := AppendNodeRecords(nil, []Node{{UUID: "v"}, n}); ok {
			t.Fatalf("%+v encoded in rpb1", n)
		}
	}
}
