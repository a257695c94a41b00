package vcenter

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestClusterUUIDReversesOnlyForItsVCenter(t *testing.T) {
	for _, ref := range []string{"domain-c7", "domain-c0", "domain-c281474976710655"} {
		id, err := ClusterUUID("VC-1", ref)
		if err != nil {
			t.Fatal(err)
		}
		if id[14] != '8' || !strings.ContainsRune("89ab", rune(id[19])) {
			t.Errorf("%s: %s is not a version 8 UUID", ref, id)
		}
		if got, ok := ClusterRef("vc-1", id); !ok || got != ref {
			t.Errorf("%s: reversed to %q %v", ref, got, ok)
		}
		if _, ok := ClusterRef("vc-2", id); ok {
			t.Errorf("%s: another vCenter's UUID reversed", ref)
		}
	}
	a, _ := ClusterUUID("vc-1", "domain-c7")
	b, _ := ClusterUUID("vc-2", "domain-c7")
	if a == b {
		t.Error("two vCenters give the same UUID")
	}
	for _, bad := range []string{"domain-c", "group-d1", "domain-c-1", "domain-c+1", "domain-c281474976710656"} {
		if _, err := ClusterUUID("vc", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, ok := ClusterRef("vc", "not-a-uuid"); ok {
		t.Error("garbage reversed")
	}
}

func TestParseConfigNamesTheProblem(t *testing.T) {
	c, err := ParseConfig(nil)
	if err != nil || c.Service != "vcenter" || c.CPUAllocationRatio != 4 || c.ReservedHostMemoryMB != 512 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for raw, want := range map[string]string{
		`{"colour": 1}`:                "unknown field",
		`{"datastore_regex": "("}`:     "datastore_regex",
		`{"cpu_allocation_ratio": -1}`: "ratios must be positive",
		`{"reserved_host_cpus": -1}`:   "must not be negative",
		`{"page_size": 0}`:             "page_size",
		`{"datastore_types": []}`:      "datastore_types",
		`{"clusters": [""]}`:           "empty name",
		`{"service": ""}`:              "service",
	} {
		if _, err := ParseConfig([]byte(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// Hosts and datastores are kept by their references' values: a reference
// of another type with the same value finds nothing, as it did when the
// whole reference was the key.
func TestInventoryFindsOnlyItsType(t *testing.T) {
	inv := &inventory{names: map[types.ManagedObjectReference]string{}, parents: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		hosts: map[string]host{}, datastores: map[string]datastore{}}
	prop := func(name string, v any) types.DynamicProperty { return types.DynamicProperty{Name: name, Val: v} }
	for _, oc := range []types.ObjectContent{
		{Obj: types.ManagedObjectReference{Type: "HostSystem", Value: "x-1"}, PropSet: []types.DynamicProperty{prop("summary.hardware.numCpuThreads", int16(8))}},
		{Obj: types.ManagedObjectReference{Type: "Datastore", Value: "x-2"}, PropSet: []types.DynamicProperty{prop("summary.capacity", int64(1<<40))}},
	} {
		if err := inv.add(oc); err != nil {
			t.Fatal(err)
		}
	}
	if h, ok := inv.hostOf(types.ManagedObjectReference{Type: "HostSystem", Value: "x-1"}); !ok || h.threads != 8 {
		t.Errorf("host: %+v %v", h, ok)
	}
	if d, ok := inv.datastoreOf(types.ManagedObjectReference{Type: "Datastore", Value: "x-2"}); !ok || d.capacity != 1<<40 {
		t.Errorf("datastore: %+v %v", d, ok)
	}
	for _, ref := range []types.ManagedObjectReference{{Type: "Datastore", Value: "x-1"}, {Type: "VirtualMachine", Value: "x-1"}, {Type: "HostSystem", Value: "x-3"}} {
		if _, ok := inv.hostOf(ref); ok {
			t.Errorf("%v found as a host", ref)
		}
	}
	if _, ok := inv.datastoreOf(types.ManagedObjectReference{Type: "HostSystem", Value: "x-2"}); ok {
		t.Error("a host reference found a datastore")
	}
}
