package baremetal

import (
	"slices"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// Conditions and Reservation are one matrix: over every combination of
// the fields the rules read, a node is schedulable exactly when it meets
// no condition, and Reservation's reason is always among its conditions
// (Disabled's for a node with explicit resources).
func TestConditionsAgreeWithReservation(t *testing.T) {
	n := 0
	for bits := range 1 << 8 {
		node := hostabi.Node{UUID: "u", ResourceClass: "gold", PowerState: "power on", ProvisionState: "available",
			Maintenance: bits&1 != 0, Retired: bits&2 != 0}
		if bits&4 != 0 {
			node.Fault = "power failure"
		}
		if bits&8 != 0 {
			node.PowerState = []string{"", "error"}[bits>>7&1]
		}
		if bits&16 != 0 {
			node.ProvisionState = "cleaning"
		}
		if bits&32 != 0 {
			node.TargetProvisionState = "available"
		}
		var instances []string
		if bits&64 != 0 {
			instances = []string{"i1"}
		}
		for _, explicit := range []bool{false, true} {
			want := Reservation(node, len(instances) > 0)
			if explicit {
				node.ResourceClass = ""
				want = Disabled(node)
			}
			cs := Conditions(node, instances)
			if (want == Schedulable) != (len(cs) == 0) || want != Schedulable &&
				!slices.ContainsFunc(cs, func(c Condition) bool { return c.Reason == want }) {
				t.Errorf("node %+v, instances %v: reason %q, conditions %v", node, instances, want, cs)
			}
			n++
		}
	}
	if n != 512 {
		t.Fatalf("%d nodes checked", n)
	}
}

func TestReasonsNameEveryState(t *testing.T) {
	if Reasons[0].State() != "schedulable" || len(Reasons) != 11 || ReservedPendingDeletion.State() != "pending_deletion" || Reasons[10] != ReservedLeftScope {
		t.Fatalf("Reasons %v", Reasons)
	}
}
