package engine

import (
	"fmt"
	"reflect"
	"slices"
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
// not desired because of its partition (held by a peer) is not vanished;
// one whose node is listed in another shard (moved away) or not listed
// is.
func TestVanished(t *testing.T) {
	a, b := bm(u1, "gold"), bm(strings.ToUpper(u2), "gold")
	b.Shard = "other"
	p := pol
	p.Scope = Scope{Shards: []string{""}}
	nodes := []hostabi.Node{a, b}
	ds, _ := DesiredState(nodes, nil, p)
	gen := placement.Generation("1")
	if v := vanished(listedOf(nodes, p).uuids, ds, map[string]placement.Generation{u1: gen}, nil); len(v) != 0 {
		t.Fatalf("all desired: %v", v)
	}
	if v := vanished(listedOf(nodes, p).uuids, ds, map[string]placement.Generation{u1: gen, u2: gen}, nil); len(v) != 1 || v[0] != u2 {
		t.Fatalf("listed in another shard (moved away) is vanished: %v", v)
	}
	byPartition := pol
	byPartition.Scope = Scope{Partitions: 64, Held: []int{Partition(u1, 64)}}
	if Partition(u2, 64) == Partition(u1, 64) {
		t.Fatal("pick uuids of two partitions")
	}
	b.Shard = ""
	nodes = []hostabi.Node{a, b}
	ds, _ = DesiredState(nodes, nil, byPartition)
	if v := vanished(listedOf(nodes, byPartition).uuids, ds, map[string]placement.Generation{u1: gen, u2: gen}, nil); len(v) != 0 {
		t.Fatalf("listed in a partition held elsewhere is not vanished: %v", v)
	}
	if v := vanished(listedOf(nodes, p).uuids, ds, map[string]placement.Generation{u1: gen, u2: gen, u3: gen}, nil); len(v) != 1 || v[0] != u3 {
		t.Fatalf("unlisted: %v", v)
	}
}

// The last cycle's node order is used again only while it still sorts
// the nodes strictly: a swap, a repeat or a node more is sorted anew.
func TestNodeOrderIsReusedOnlyWhileSorted(t *testing.T) {
	nodes := []hostabi.Node{{UUID: "C"}, {UUID: "a"}, {UUID: "b"}}
	ids := func(keys []nodeKey) (out []string) {
		for _, k := range keys {
			out = append(out, k.id+"@"+nodes[k.i].UUID)
		}
		return out
	}
	clearIDs := func(keys []nodeKey) []nodeKey {
		for i := range keys {
			keys[i].id = ""
		}
		return keys
	}
	want := ids(byUUID(nodes))
	last := clearIDs(byUUID(nodes))
	if got := ids(byUUIDAgain(nodes, last)); !slices.Equal(got, want) {
		t.Fatalf("same order: %v, want %v", got, want)
	}
	for _, change := range []func(){
		func() { nodes[0], nodes[2] = nodes[2], nodes[0] },
		func() { nodes[1] = nodes[2] },
		func() { nodes = append(nodes, hostabi.Node{UUID: "0"}) },
	} {
		last = clearIDs(byUUID(nodes))
		change()
		want = ids(byUUID(nodes))
		if got := ids(byUUIDAgain(nodes, last)); !slices.Equal(got, want) {
			t.Fatalf("changed: %v, want %v", got, want)
		}
	}
}

// The lists kept from cycle to cycle give the desired state a fresh call
// gives, whatever changed between two calls: the same nodes (the kept
// order used as it is), a uuid changed in place, shorter or in capitals,
// a swap, a repeat, a node more or less.
func TestDesiredStateWithKeptListsIsDesiredState(t *testing.T) {
	pol := Policy{OwnerTrait: OwnerTrait("t"), Scope: Scope{Shards: []string{"", "a"}}}
	uuid := func(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012d", uint32(i)*0x9e3779b9, i) }
	var nodes []hostabi.Node
	for i := range 10 {
		nodes = append(nodes, hostabi.Node{UUID: uuid(i), ResourceClass: "gold"})
	}
	nodes[6].Shard = "b"                              // out of scope
	nodes[7].ResourceClass = ""                       // a problem, left out
	nodes[8].Traits = []string{"CUSTOM_OK", "not ok"} // a problem, written
	nodes[9].Maintenance = true
	instances := []hostabi.Instance{{NodeUUID: strings.ToUpper(uuid(2))}}
	var spare spareDesired
	same := func() {}
	for step, change := range []func(){
		same, same,
		func() { nodes[2].UUID = uuid(20) },
		same,
		func() { nodes[3].UUID = nodes[3].UUID[:35] },
		func() { nodes[3].UUID = strings.ToUpper(uuid(3)) },
		same,
		func() { nodes[0], nodes[4] = nodes[4], nodes[0] },
		same,
		func() { nodes[1] = nodes[5] },
		same, same,
		func() { nodes[1].UUID = uuid(1) },
		same,
		func() { nodes = append(nodes, hostabi.Node{UUID: uuid(7), ResourceClass: "gold"}) },
		func() { nodes = nodes[1:] },
		same,
	} {
		change()
		want, wantP := DesiredState(nodes, instances, pol)
		l := spare.take()
		got, gotP := desiredState(nodes, instances, pol, l)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotP, wantP) {
			t.Fatalf("step %d: kept lists give %v %v, want %v %v", step, got, gotP, want, wantP)
		}
		// The keys left give the listed uuids the nodes give.
		withNova := pol
		withNova.Nova.Enabled = true
		for _, p := range []Policy{pol, withNova} {
			if got, want := listedWith(nodes, l.keys, p), listedOf(nodes, p); !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: listed from the keys %v, want %v", step, got, want)
			}
		}
		spare.give(l)
	}
}

// The kept order costs no allocation per node.
func TestDesiredStateWithKeptListsAllocatesNoStringPerNode(t *testing.T) {
	pol := Policy{OwnerTrait: OwnerTrait("t")}
	var nodes []hostabi.Node
	for i := range 1000 {
		nodes = append(nodes, hostabi.Node{UUID: fmt.Sprintf("%08x-0000-4000-8000-%012d", uint32(i)*0x9e3779b9, i), ResourceClass: "gold"})
	}
	var spare spareDesired
	run := func() {
		l := spare.take()
		desiredState(nodes, nil, pol, l)
		spare.give(l)
	}
	run()
	if n := testing.AllocsPerRun(5, run); n > 100 {
		t.Fatalf("%.0f allocations for %d nodes", n, len(nodes))
	}
}
