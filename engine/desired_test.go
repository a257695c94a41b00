package engine

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

const (
	u1 = "11111111-1111-4111-8111-111111111111"
	u2 = "22222222-2222-4222-8222-222222222222"
	u3 = "33333333-3333-4333-8333-333333333333"
)

var pol = Policy{OwnerTrait: OwnerTrait("t"), MarkerTraits: []string{"COMPUTE_NODE"}}

func bm(uuid, rc string) hostabi.Node {
	return hostabi.Node{UUID: uuid, ResourceClass: rc, PowerState: "power on", ProvisionState: "available"}
}

func TestDesiredBareMetal(t *testing.T) {
	n := bm(u1, "baremetal-gold")
	n.Traits = []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}
	ds, probs := DesiredState([]hostabi.Node{n}, nil, pol)
	if len(probs) != 0 || len(ds) != 1 {
		t.Fatalf("desired %v problems %v", ds, probs)
	}
	d := ds[0]
	want := placement.Inventory{Total: 1, Reserved: 0, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	if d.UUID != u1 || d.Name != u1 || d.Inventory["CUSTOM_BAREMETAL_GOLD"] != want || len(d.Inventory) != 1 {
		t.Fatalf("got %+v", d)
	}
	if strings.Join(d.Traits, ",") != "COMPUTE_NODE,CUSTOM_GOLD,CUSTOM_RPENGINE_OWNER_T,HW_CPU_X86_AVX2" {
		t.Fatalf("traits %v", d.Traits)
	}
}

func TestDesiredReservesNodesWithListedInstances(t *testing.T) {
	ds, _ := DesiredState([]hostabi.Node{bm(u1, "gold"), bm(u2, "gold")},
		[]hostabi.Instance{{UUID: "i", NodeUUID: strings.ToUpper(u2)}}, pol)
	if ds[0].Inventory["CUSTOM_GOLD"].Reserved != 0 || ds[1].Inventory["CUSTOM_GOLD"].Reserved != 1 {
		t.Fatalf("reserved: %+v", ds)
	}
}

func TestDesiredExplicitResources(t *testing.T) {
	n := hostabi.Node{UUID: u1, Resources: map[string]hostabi.Resource{
		"VCPU":      {Total: 32, AllocationRatio: 4},
		"MEMORY_MB": {Total: 131072, Reserved: 2048, AllocationRatio: 1.5},
	}}
	ds, probs := DesiredState([]hostabi.Node{n}, nil, pol)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	vcpu := ds[0].Inventory["VCPU"]
	if vcpu != (placement.Inventory{Total: 32, MinUnit: 1, MaxUnit: 32, StepSize: 1, AllocationRatio: 4}) {
		t.Fatalf("VCPU %+v", vcpu)
	}
	n.Maintenance = true
	ds, _ = DesiredState([]hostabi.Node{n}, nil, pol)
	if r := ds[0].Inventory["MEMORY_MB"]; r.Reserved != r.Total {
		t.Fatalf("maintenance must reserve everything: %+v", r)
	}
}

func TestDesiredQuarantinesBadNodes(t *testing.T) {
	cases := []struct {
		name string
		node hostabi.Node
		want string
	}{
		{"empty class", bm(u1, ""), "no resource_class"},
		{"class too long", bm(u1, strings.Repeat("x", 300)), "longer than 255"},
		{"bad uuid", bm("node-1", "gold"), "not a UUID"},
		{"both kinds", hostabi.Node{UUID: u1, ResourceClass: "g", Resources: map[string]hostabi.Resource{"VCPU": {Total: 1}}}, "both"},
		{"zero total", hostabi.Node{UUID: u1, Resources: map[string]hostabi.Resource{"VCPU": {Total: 0}}}, "total 0"},
		{"reserved over total", hostabi.Node{UUID: u1, Resources: map[string]hostabi.Resource{"VCPU": {Total: 2, Reserved: 3}}}, "reserved 3"},
		{"bad class name", hostabi.Node{UUID: u1, Resources: map[string]hostabi.Resource{"vcpu": {Total: 2}}}, "not a valid"},
	}
	for _, c := range cases {
		ds, probs := DesiredState([]hostabi.Node{c.node, bm(u3, "gold")}, nil, pol)
		if len(ds) != 1 || ds[0].UUID != u3 {
			t.Errorf("%s: the good node must still be desired: %+v", c.name, ds)
		}
		if len(probs) != 1 || !strings.Contains(probs[0].Reason, c.want) {
			t.Errorf("%s: problems %v, want one containing %q", c.name, probs, c.want)
		}
	}
}

func TestDesiredDropsDuplicatesAndInvalidTraits(t *testing.T) {
	a, b := bm(u1, "gold"), bm(strings.ToUpper(u1), "silver")
	c := bm(u2, "gold")
	c.Traits = []string{"CUSTOM_OK", "not a trait"}
	ds, probs := DesiredState([]hostabi.Node{a, b, c}, nil, pol)
	if len(ds) != 1 || ds[0].UUID != u2 {
		t.Fatalf("duplicates must both be left out: %+v", ds)
	}
	if len(probs) != 3 {
		t.Fatalf("want 2 duplicate problems and 1 trait problem, got %v", probs)
	}
	if strings.Contains(strings.Join(ds[0].Traits, ","), "not a trait") || !strings.Contains(strings.Join(ds[0].Traits, ","), "CUSTOM_OK") {
		t.Fatalf("traits %v", ds[0].Traits)
	}
}

func TestDesiredScope(t *testing.T) {
	a, b := bm(u1, "gold"), bm(u2, "gold")
	a.Shard, b.Shard = "s1", "s2"
	p := pol
	p.Scope = Scope{Shards: []string{"s2"}}
	ds, probs := DesiredState([]hostabi.Node{a, b}, nil, p)
	if len(ds) != 1 || ds[0].UUID != u2 || len(probs) != 0 {
		t.Fatalf("scope: %+v %v", ds, probs)
	}
}

// TestDesiredSortedAndProblemsInSourceOrder: the result is in uuid order
// whatever the source's order, and problems keep the source's order (the
// desired state visits nodes by uuid since the 100k work).
func TestDesiredSortedAndProblemsInSourceOrder(t *testing.T) {
	bad := bm("not-a-uuid", "gold")
	dupA, dupB := bm(u1, "gold"), bm(strings.ToUpper(u1), "gold")
	nodes := []hostabi.Node{bm(u3, "gold"), dupB, bm(u2, "gold"), bad, dupA}
	ds, probs := DesiredState(nodes, nil, pol)
	if len(ds) != 2 || ds[0].UUID != u2 || ds[1].UUID != u3 {
		t.Fatalf("desired %+v", ds)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.NodeUUID+" "+p.Code)
	}
	want := []string{strings.ToUpper(u1) + " duplicate", "not-a-uuid bad_uuid", u1 + " duplicate"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("problems %q, want %q", got, want)
	}
}

// TestVanished: the usual case (every owned provider desired) answers
// none without a set of uuids; an owned provider whose node is listed but
// not desired (out of scope, quarantined) is not vanished; one whose node
// is not listed is.
func TestVanished(t *testing.T) {
	a, b := bm(u1, "gold"), bm(strings.ToUpper(u2), "gold")
	b.Shard = "other"
	p := pol
	p.Scope = Scope{Shards: []string{""}}
	nodes := []hostabi.Node{a, b}
	ds, _ := DesiredState(nodes, nil, p)
	gen := placement.Generation("1")
	if v := vanished(nodes, ds, map[string]placement.Generation{u1: gen}); len(v) != 0 {
		t.Fatalf("all desired: %v", v)
	}
	if v := vanished(nodes, ds, map[string]placement.Generation{u1: gen, u2: gen}); len(v) != 0 {
		t.Fatalf("listed out of scope is not vanished: %v", v)
	}
	if v := vanished(nodes, ds, map[string]placement.Generation{u1: gen, u2: gen, u3: gen}); len(v) != 1 || v[0] != u3 {
		t.Fatalf("unlisted: %v", v)
	}
}
