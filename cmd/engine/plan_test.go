package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

const (
	u1 = "00000000-0000-4000-8000-000000000001"
	u2 = "00000000-0000-4000-8000-000000000002"
	u3 = "00000000-0000-4000-8000-000000000003"
	u4 = "00000000-0000-4000-8000-000000000004"
	u5 = "00000000-0000-4000-8000-000000000005"
)

// Each kind of outcome renders as its diff line.
func TestPlanLines(t *testing.T) {
	cases := []struct {
		name string
		o    engine.Outcome
		want string
	}{
		{"create", engine.Outcome{Node: u1, Name: "rack1-n1", Kind: engine.KindCreated, Changes: []engine.Change{
			{Field: "provider", To: u1}, {Field: "class", Class: "CUSTOM_GOLD", Added: []string{"CUSTOM_GOLD"}},
			{Field: "traits", Added: []string{"COMPUTE_NODE"}}}},
			"+ create  rack1-n1  " + u1 + "  CUSTOM_GOLD (schedulable)"},
		{"reserve", engine.Outcome{Node: u2, Name: "rack1-n2", Kind: engine.KindUpdated, Reserved: "maintenance",
			Changes: []engine.Change{{Field: "reserved", Class: "CUSTOM_GOLD", From: "0", To: "1"}}},
			"~ update  rack1-n2  " + u2 + "  reserved 0 → 1 (maintenance)"},
		{"unreserve", engine.Outcome{Node: u2, Kind: engine.KindUpdated,
			Changes: []engine.Change{{Field: "reserved", Class: "CUSTOM_GOLD", From: "1", To: "0"}}},
			"~ update  -  " + u2 + "  reserved 1 → 0 (schedulable)"},
		{"traits", engine.Outcome{Node: u3, Name: "gpu-7", Kind: engine.KindUpdated,
			Changes: []engine.Change{{Field: "traits", Added: []string{"CUSTOM_GPU"}, Removed: []string{"CUSTOM_OLD"}}}},
			"~ update  gpu-7  " + u3 + "  traits +CUSTOM_GPU −CUSTOM_OLD"},
		{"two classes", engine.Outcome{Node: u3, Kind: engine.KindUpdated, Changes: []engine.Change{
			{Field: "total", Class: "VCPU", From: "8", To: "16"}, {Field: "total", Class: "MEMORY_MB", From: "1024", To: "2048"}}},
			"~ update  -  " + u3 + "  VCPU total 8 → 16; MEMORY_MB total 1024 → 2048"},
		{"class swap", engine.Outcome{Node: u3, Kind: engine.KindUpdated, Changes: []engine.Change{
			{Field: "class", Removed: []string{"CUSTOM_OLD"}}, {Field: "class", Class: "CUSTOM_NEW", Added: []string{"CUSTOM_NEW"}}}},
			"~ update  -  " + u3 + "  class −CUSTOM_OLD; class +CUSTOM_NEW"},
		{"delete", engine.Outcome{Node: u4, Kind: engine.KindDeleted, Proof: 2, ProofsNeeded: 2},
			"- delete  -  " + u4 + "  (proof 2 of 2)"},
		{"pending", engine.Outcome{Node: u4, Kind: engine.KindPendingDeletion, Proof: 1, ProofsNeeded: 2},
			". pending  -  " + u4 + "  (proof 1 of 2: the next cycle's proof deletes it)"},
		{"grace", engine.Outcome{Node: u4, Kind: engine.KindPendingDeletion, Proof: 2, ProofsNeeded: 2, Reason: engine.ReasonGrace},
			". pending  -  " + u4 + "  (proof 2 of 2: waiting for engine.delete_grace)"},
		{"quarantined", engine.Outcome{Node: u5, Name: "bad", Kind: engine.KindQuarantined, Reason: "no_class", Message: "class is empty"},
			"! quarantined  bad  " + u5 + "  (no_class: class is empty)"},
		{"blocked", engine.Outcome{Node: u5, Kind: engine.KindBlocked, Reason: "allocations", Message: "reserved, not deleted"},
			"! blocked  -  " + u5 + "  (allocations: reserved, not deleted)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			renderPlan(&b, engine.Report{Outcomes: []engine.Outcome{c.o}}, "")
			line, _, _ := strings.Cut(b.String(), "\n")
			if line != c.want {
				t.Errorf("got  %q\nwant %q", line, c.want)
			}
		})
	}
}

// A whole plan: grouped by kind, unchanged nodes counted, not listed;
// errors of the cycle shown; --node keeps one node.
func TestPlanRendering(t *testing.T) {
	r := engine.Report{
		Outcomes: []engine.Outcome{
			{Node: u5, Name: "n5", Kind: engine.KindQuarantined, Reason: "no_class", Message: "class is empty"},
			{Node: u1, Name: "n1", Kind: engine.KindUnchanged, Reserved: "instance"},
			{Node: u2, Name: "n2", Kind: engine.KindUpdated, Reserved: "maintenance",
				Changes: []engine.Change{{Field: "reserved", Class: "CUSTOM_GOLD", From: "0", To: "1"}}},
			{Node: u4, Kind: engine.KindDeleted, Proof: 2, ProofsNeeded: 2},
			{Node: u3, Name: "n3", Kind: engine.KindCreated, Changes: []engine.Change{{Field: "class", Class: "CUSTOM_GOLD", Added: []string{"CUSTOM_GOLD"}}}},
		},
		Errors: []engine.Error{{Node: u5, Kind: engine.ErrQuarantined, Message: "node " + u5 + ": class is empty"},
			{Node: u2, Kind: engine.ErrInvalidData, Message: "node " + u2 + ": invalid traits [\"x\"] left out; the rest are written"}},
	}
	cases := []struct{ node, want string }{
		{"", `+ create       n3  00000000-0000-4000-8000-000000000003  CUSTOM_GOLD (schedulable)
~ update       n2  00000000-0000-4000-8000-000000000002  reserved 0 → 1 (maintenance)
- delete       -   00000000-0000-4000-8000-000000000004  (proof 2 of 2)
! quarantined  n5  00000000-0000-4000-8000-000000000005  (no_class: class is empty)
error: node 00000000-0000-4000-8000-000000000002: invalid traits ["x"] left out; the rest are written

Plan: 1 to create, 1 to update, 1 to delete, 1 quarantined, 1 unchanged. Nothing was written.
`},
		{"n2", `~ update  n2  00000000-0000-4000-8000-000000000002  reserved 0 → 1 (maintenance)
error: node 00000000-0000-4000-8000-000000000002: invalid traits ["x"] left out; the rest are written

Plan: 1 to update. Nothing was written.
`},
		{strings.ToUpper(u1), `= unchanged  n1  00000000-0000-4000-8000-000000000001  (instance)

Plan: 1 unchanged. Nothing was written.
`},
		{"nope", `
Plan: no node "nope" in scope. Nothing was written.
`},
	}
	for _, c := range cases {
		var b bytes.Buffer
		renderPlan(&b, filterReport(r, c.node), c.node)
		if b.String() != c.want {
			t.Errorf("--node %q:\n%s\nwant\n%s", c.node, b.String(), c.want)
		}
	}
}

// A provider another engine owns: its line says so, and the summary
// counts the failure as once's does.
func TestPlanCountsFailures(t *testing.T) {
	r := engine.Report{Failed: 1, Outcomes: []engine.Outcome{
		{Node: u1, Name: "n1", Kind: engine.KindCreated},
		{Node: u2, Name: "n2", Kind: engine.KindConflict,
			Message: "provider " + u2 + " exists and is owned by CUSTOM_RPENGINE_OWNER_B: left alone"}}}
	var b bytes.Buffer
	renderPlan(&b, r, "")
	want := `+ create    n1  00000000-0000-4000-8000-000000000001  (schedulable)
! conflict  n2  00000000-0000-4000-8000-000000000002  (provider 00000000-0000-4000-8000-000000000002 exists and is owned by CUSTOM_RPENGINE_OWNER_B: left alone)

Plan: 1 to create, 1 in conflict, failed 1. Nothing was written.
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
