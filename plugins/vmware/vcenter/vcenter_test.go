package vcenter

import (
	"strings"
	"testing"
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
