package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/plugins/vmware/vcenter"
)

// vmwareConfig writes an engine config whose plugin is vmware.wasm with
// the vCenter granted at vcURL, the host holding the login.
func vmwareConfig(t *testing.T, id, placementURL, plugin, vcURL string) string {
	t.Helper()
	dir := t.TempDir()
	pw := dir + "/vc.pw"
	if err := os.WriteFile(pw, []byte(vcsimtest.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`
[plugin.services]
vcenter = { url = %q, auth = "vcenter", user = %q, password_file = %q }

[plugin.config]
datastore_types = ["VMFS", "NFS", "NFS41", "vsan", "OTHER"]
cpu_allocation_ratio = 8.0
ram_allocation_ratio = 1.5
disk_allocation_ratio = 1.0
reserved_host_cpus = 1
reserved_host_memory_mb = 1024
reserved_host_disk_mb = 2048
`, vcURL, vcsimtest.User, pw)
	return writeConfig(t, id, placementURL, plugin, extra)
}

// vmwareWant computes every cluster's inventory from vcsim's own
// inventory, read by the test with govmomi: nova's arithmetic with the
// config above, written independently of the plugin.
func vmwareWant(t *testing.T, sim *vcsimtest.Sim) map[string]map[string]inventory {
	t.Helper()
	ctx := context.Background()
	c := sim.Client(ctx)
	out := map[string]map[string]inventory{}
	for _, cl := range vcsimtest.Clusters(ctx, t, c) {
		var threads, maxT, mem, maxM, disk, maxD int64
		for _, h := range cl.Hosts {
			if h.Maintenance || !h.Connected {
				continue
			}
			threads += h.Threads
			maxT = max(maxT, h.Threads)
			mem += h.MemoryBytes / (1 << 20)
			maxM = max(maxM, h.MemoryBytes/(1<<20))
		}
		for _, d := range cl.Datastores {
			if d.Accessible {
				disk += d.Capacity
				maxD = max(maxD, d.Capacity)
			}
		}
		id, err := vcenter.ClusterUUID(c.ServiceContent.About.InstanceUuid, cl.Ref.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = map[string]inventory{
			"VCPU":      {Total: threads, Reserved: 1, MinUnit: 1, MaxUnit: maxT, StepSize: 1, AllocationRatio: 8},
			"MEMORY_MB": {Total: mem, Reserved: 1024, MinUnit: 1, MaxUnit: maxM, StepSize: 1, AllocationRatio: 1.5},
			"DISK_GB":   {Total: disk >> 30, Reserved: 2, MinUnit: 1, MaxUnit: maxD >> 30, StepSize: 1, AllocationRatio: 1},
		}
	}
	return out
}

// vmwareCheck compares Placement's inventories with want.
func vmwareCheck(t *testing.T, placementURL string, want map[string]map[string]inventory) {
	t.Helper()
	for id, w := range want {
		p, ok := readProvider(t, placementURL, id)
		if !ok {
			t.Errorf("cluster %s: no provider", id)
			continue
		}
		if len(p.Inventories) != len(w) {
			t.Errorf("cluster %s: inventories %+v, want %+v", id, p.Inventories, w)
		}
		for rc, inv := range w {
			if p.Inventories[rc] != inv {
				t.Errorf("cluster %s %s: %+v, want %+v", id, rc, p.Inventories[rc], inv)
			}
		}
	}
}

// TestVMwareEndToEnd runs the engine with vmware.wasm against vcsim and
// the real Placement: one provider per cluster with nova's arithmetic,
// one Placement request when idle, the same providers after a vcsim
// restart (new sessions, same UUIDs), then a host into maintenance, a
// host added and a datastore removed, and a cluster gone, whose provider
// is deleted only on the second cycle that proves it gone.
func TestVMwareEndToEnd(t *testing.T) {
	placementURL := placementtest.Shared(t)
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 3, Hosts: 3, Datastores: 2})
	plugin := plugintest.Build(t, "plugins/vmware")
	id := fmt.Sprintf("vmware-e2e-%x", os.Getpid())
	cfg := vmwareConfig(t, id, placementURL, plugin, sim.URL)

	want := vmwareWant(t, sim)
	if len(want) != 3 {
		t.Fatalf("vcsim has %d clusters", len(want))
	}
	if r := once(t, cfg); r.Nodes != 3 || r.Created != 3 {
		t.Fatalf("first cycle: %+v", r)
	}
	vmwareCheck(t, placementURL, want)
	if r := once(t, cfg); r.Unchanged != 3 || r.PlacementRequests != 1 {
		t.Fatalf("idle cycle: %+v (want 3 unchanged, 1 Placement request)", r)
	}

	sim.Restart()
	if r := once(t, cfg); r.Unchanged != 3 || r.Created+r.Updated+r.Deleted != 0 {
		t.Fatalf("after a vcsim restart: %+v", r)
	}

	ctx := context.Background()
	c := sim.Client(ctx)
	vcUUID := c.ServiceContent.About.InstanceUuid
	cls := vcsimtest.Clusters(ctx, t, c)
	before := vmwareWant(t, sim)
	vcsimtest.EnterMaintenance(ctx, t, c, cls[0].Hosts[0].Ref)
	vcsimtest.AddHost(ctx, t, c, cls[1].Ref, "added-host.example")
	vcsimtest.RemoveDatastore(ctx, t, c, cls[0].Datastores[0].Name)
	want = vmwareWant(t, sim)
	id0, _ := vcenter.ClusterUUID(vcUUID, cls[0].Ref.Value)
	id1, _ := vcenter.ClusterUUID(vcUUID, cls[1].Ref.Value)
	if want[id0]["VCPU"].Total >= before[id0]["VCPU"].Total || want[id1]["VCPU"].Total <= before[id1]["VCPU"].Total ||
		want[id0]["DISK_GB"].Total >= before[id0]["DISK_GB"].Total {
		t.Fatalf("the changes did not change vcsim's inventory: before %v, after %v", before, want)
	}
	if r := once(t, cfg); r.Nodes != 3 || r.Updated != 3 || r.Deleted+r.Created != 0 {
		t.Fatalf("cycle after the changes: %+v (the datastore is on every cluster: 3 updated)", r)
	}
	vmwareCheck(t, placementURL, want)

	// vcsim cannot destroy a cluster; restarted with one cluster fewer, the
	// last one is gone for good (ManagedObjectNotFound), the others are the
	// same objects.
	gone, _ := vcenter.ClusterUUID(vcUUID, cls[2].Ref.Value)
	sim.RestartWith(vcsimtest.Model{Clusters: 2, Hosts: 3, Datastores: 2})
	want = vmwareWant(t, sim)
	if _, ok := want[gone]; ok || len(want) != 2 {
		t.Fatalf("after the restart with 2 clusters vcsim has %d, the last one among them: %v", len(want), ok)
	}
	r := once(t, cfg)
	if r.Nodes != 2 || r.Deleted != 0 {
		t.Fatalf("first proof: %+v (want 2 nodes, 0 deleted)", r)
	}
	if _, ok := readProvider(t, placementURL, gone); !ok {
		t.Fatal("the destroyed cluster's provider went on the first proof")
	}
	vmwareCheck(t, placementURL, want)
	if r := once(t, cfg); r.Deleted != 1 {
		t.Fatalf("second proof: %+v (want 1 deleted)", r)
	}
	if _, ok := readProvider(t, placementURL, gone); ok {
		t.Fatal("the destroyed cluster's provider is still there after two proofs")
	}
	vmwareCheck(t, placementURL, want)
	if r := once(t, cfg); r.PlacementRequests != 1 || r.Unchanged != 2 {
		t.Fatalf("idle cycle at the end: %+v", r)
	}
}
