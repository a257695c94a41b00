package soak

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
)

// FuzzDesiredState feeds the engine's pure heart whatever a plugin could
// send: every record it would write must be one Placement accepts, and
// every node in scope is either written or reported, never silently lost.
func FuzzDesiredState(f *testing.F) {
	for _, c := range badInputCorpus() {
		nodes, inst := c.edit(testNodes(3), nil)
		if b, _ := json.Marshal(fuzzInput{nodes, inst}); len(b) < 1<<14 {
			f.Add(b) // the megabyte cases would slow every mutation
		}
	}
	f.Add([]byte(`{"nodes":[{"uuid":"5A000000-0000-4000-8000-000000000001","resource_class":"--","traits":["CUSTOM_"],"shard":"a"}]}`))
	f.Add([]byte(`{"nodes":[{"uuid":"5a000000-0000-4000-8000-000000000001","resources":{"VCPU":{"total":4,"reserved":4,"max_unit":9}},"shard":"b"}]}`))
	pol := newPolicy().Policy
	f.Fuzz(func(t *testing.T, b []byte) {
		var in fuzzInput
		if json.Unmarshal(b, &in) != nil {
			return
		}
		desired, problems := engine.DesiredState(in.Nodes, in.Instances, pol)
		reported := map[string]bool{}
		for _, p := range problems { // a long value is quoted cut: "<64 bytes>... (N bytes)"
			reported[quotedPrefix(p.NodeUUID)] = true
		}
		written := map[string]bool{}
		for _, d := range desired {
			checkDesired(t, d)
			if written[d.UUID] {
				t.Fatalf("provider %s desired twice", d.UUID)
			}
			written[d.UUID] = true
		}
		for _, n := range in.Nodes {
			if pol.Scope.Contains(n) && !written[strings.ToLower(n.UUID)] && !reported[quotedPrefix(n.UUID)] {
				t.Fatalf("node %q in scope neither written nor reported", n.UUID)
			}
		}
	})
}

// quotedPrefix is the part of a node's uuid a problem quotes in full:
// the engine cuts values longer than 64 bytes.
func quotedPrefix(s string) string {
	if i := strings.Index(s, "... ("); i >= 0 {
		s = s[:i]
	}
	return s[:min(len(s), 64)]
}

type fuzzInput struct {
	Nodes     []hostabi.Node     `json:"nodes"`
	Instances []hostabi.Instance `json:"instances"`
}

// checkDesired applies Placement's schemas to one desired provider.
func checkDesired(t *testing.T, d engine.Desired) {
	t.Helper()
	if !lowerUUID(d.UUID) || d.Name != d.UUID {
		t.Fatalf("provider uuid %q name %q", d.UUID, d.Name)
	}
	if len(d.Inventory) == 0 {
		t.Fatalf("provider %s without inventory", d.UUID)
	}
	for rc, inv := range d.Inventory {
		const maxInt = 2147483647
		custom := strings.HasPrefix(rc, "CUSTOM_")
		if !validTrait(rc) || custom && len(rc) == len("CUSTOM_") {
			t.Fatalf("provider %s: class %q", d.UUID, rc)
		}
		if inv.Total < 1 || inv.Total > maxInt || inv.Reserved < 0 || inv.Reserved > inv.Total ||
			inv.MinUnit < 1 || inv.MaxUnit < inv.MinUnit || inv.MaxUnit > maxInt ||
			inv.StepSize < 1 || inv.StepSize > maxInt || !(inv.AllocationRatio > 0) {
			t.Fatalf("provider %s: %s %+v outside Placement's schema", d.UUID, rc, inv)
		}
	}
	if !slices.IsSorted(d.Traits) || len(slices.Compact(slices.Clone(d.Traits))) != len(d.Traits) {
		t.Fatalf("provider %s: traits %q not a sorted set", d.UUID, d.Traits)
	}
	for _, tr := range d.Traits {
		if !validTrait(tr) || tr == "CUSTOM_" {
			t.Fatalf("provider %s: trait %q Placement refuses", d.UUID, tr)
		}
	}
}
