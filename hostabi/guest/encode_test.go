package guest

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func sampleNodes() []hostabi.Node {
	return []hostabi.Node{
		{UUID: "u1", Name: "bm-<1>&\"x\"\n\t\x01", ResourceClass: "baremetal-gold", Traits: []string{"CUSTOM_A", "é\u2028"},
			InstanceUUID: "i", Maintenance: true, PowerState: "power on", ProvisionState: "active",
			TargetProvisionState: "deleted", Fault: "power failure", Retired: true, Shard: "s", ConductorGroup: "g"},
		{UUID: "u2", Resources: map[string]hostabi.Resource{
			"VCPU": {Total: 32, AllocationRatio: 4}, "MEMORY_MB": {Total: 131072, Reserved: 2048, MinUnit: 1, MaxUnit: 65536, StepSize: 2, AllocationRatio: 1.5},
			"DISK_GB": {Total: 1, AllocationRatio: 1e-9}, "X": {Total: 1, AllocationRatio: 3e22}}},
		{UUID: "bad\xff utf8"},
		{UUID: "u3", Owner: "p<1>", Properties: map[string]string{"properties.rack": "r12", "extra.row": "7\u2028", "a": ""}},
	}
}

func TestAppendListNodesMatchesEncodingJSON(t *testing.T) {
	for _, r := range []hostabi.ListNodesResponse{
		{Nodes: sampleNodes(), Complete: true},
		{Error: hostabi.Error{Error: "boom <x>"}},
		{Nodes: []hostabi.Node{}, Complete: true},
	} {
		want, _ := json.Marshal(r)
		got, ok := appendListNodes(nil, r)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	}
	if _, ok := appendListNodes(nil, hostabi.ListNodesResponse{Nodes: []hostabi.Node{{Resources: map[string]hostabi.Resource{"V": {Total: 1, AllocationRatio: math.NaN()}}}}}); ok {
		t.Fatal("NaN must fall back to encoding/json (which refuses it)")
	}
}

func FuzzAppendListNodes(f *testing.F) {
	f.Add("u", "name", "rc", "trait", 1.5, int64(3))
	f.Fuzz(func(t *testing.T, uuid, name, rc, trait string, ratio float64, total int64) {
		r := hostabi.ListNodesResponse{Complete: true, Nodes: []hostabi.Node{
			{UUID: uuid, Name: name, ResourceClass: rc, Traits: []string{trait}, Owner: name, Properties: map[string]string{trait: rc}},
			{UUID: uuid, Resources: map[string]hostabi.Resource{trait: {Total: total, AllocationRatio: ratio}}},
		}}
		want, err := json.Marshal(r)
		got, ok := appendListNodes(nil, r)
		if (err == nil) != ok || ok && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s (%v)\nwant %s (%v)", got, ok, want, err)
		}
	})
}

func BenchmarkEncodeListNodes10k(b *testing.B) {
	nodes := make([]hostabi.Node, 10000)
	for i := range nodes {
		nodes[i] = sampleNodes()[0]
	}
	r := hostabi.ListNodesResponse{Nodes: nodes, Complete: true}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			appendListNodes(make([]byte, 0, 4<<20), r)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(r)
		}
	})
}
