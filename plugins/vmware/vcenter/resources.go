package vcenter

import (
	"slices"

	"github.com/rpengine/rpengine/hostabi"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// resources is nova's arithmetic for one cluster (doc.go says where it
// differs): VCPU and MEMORY_MB from the connected hosts not in
// maintenance, DISK_GB from the cluster's usable datastores. When no host
// is usable, the totals are those of all its hosts and all is true: the
// node is reported in maintenance and the engine reserves everything,
// keeping allocations valid instead of removing inventory they use.
// A class whose total is 0 is left out (Placement has no empty inventory).
func (c *Client) resources(inv *inventory, cl cluster) (map[string]hostabi.Resource, bool) {
	cpu, mem := sumHosts(inv, cl, true)
	all := false
	if cpu.n == 0 {
		cpu, mem = sumHosts(inv, cl, false)
		all = cpu.n > 0
	}
	var disk sum
	for _, ref := range cl.datastores {
		d, ok := inv.datastoreOf(ref)
		if !ok || !d.accessible || d.maintenance != "normal" || !slices.Contains(c.cfg.DatastoreTypes, d.kind) ||
			!c.cfg.datastores.MatchString(d.name) {
			continue
		}
		disk.add(d.capacity)
	}
	out := map[string]hostabi.Resource{}
	put := func(rc string, s sum, unit, reserved int64, ratio float64) {
		total := s.total / unit
		if total < 1 {
			return
		}
		out[rc] = hostabi.Resource{Total: total, Reserved: min(reserved, total), MinUnit: 1,
			MaxUnit: max(s.max/unit, 1), StepSize: 1, AllocationRatio: ratio}
	}
	put("VCPU", cpu, 1, c.cfg.ReservedHostCPUs, c.cfg.CPUAllocationRatio)
	put("MEMORY_MB", mem, 1, c.cfg.ReservedHostMemoryMB, c.cfg.RAMAllocationRatio)
	put("DISK_GB", disk, gib, (c.cfg.ReservedHostDiskMB+1023)/1024, c.cfg.DiskAllocationRatio)
	return out, all
}

// sum is a total, its largest part and the number of parts.
type sum struct{ total, max, n int64 }

func (s *sum) add(v int64) { s.total += v; s.max = max(s.max, v); s.n++ }

// sumHosts adds up CPU threads and memory (in MiB, per host as nova
// rounds) of the cluster's hosts: only the usable ones (connected, not in
// maintenance) when usable is set.
func sumHosts(inv *inventory, cl cluster, usable bool) (cpu, mem sum) {
	for _, ref := range cl.hosts {
		h, ok := inv.hostOf(ref)
		if !ok || usable && (h.maintenance || h.connection != "connected") {
			continue
		}
		cpu.add(h.threads)
		mem.add(h.memory / mib)
	}
	return cpu, mem
}
