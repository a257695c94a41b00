package vcenter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// Config is [plugin.config] of the VMware plugin. The vCenter's address
// and credentials are not here: the operator grants the service in
// [plugin.services] (vcenter = { url = ..., auth = "vcenter", ... }) and
// the host logs in and adds the session.
type Config struct {
	// Service is the granted service's name. Default "vcenter".
	Service string `json:"service"`
	// Datacenters and Clusters, by name, select what is reported; empty
	// means all.
	Datacenters []string `json:"datacenters"`
	Clusters    []string `json:"clusters"`
	// DatastoreRegex selects the datastores counted in DISK_GB (nova's
	// datastore_regex); empty means all. DatastoreTypes are the summary
	// types counted (nova: VMFS, NFS, NFS41, vsan).
	DatastoreRegex string   `json:"datastore_regex"`
	DatastoreTypes []string `json:"datastore_types"`

	// Allocation ratios (nova's initial_*_allocation_ratio defaults).
	CPUAllocationRatio  float64 `json:"cpu_allocation_ratio"`
	RAMAllocationRatio  float64 `json:"ram_allocation_ratio"`
	DiskAllocationRatio float64 `json:"disk_allocation_ratio"`
	// Reserved amounts per cluster (nova's reserved_host_* defaults).
	ReservedHostCPUs     int64 `json:"reserved_host_cpus"`
	ReservedHostMemoryMB int64 `json:"reserved_host_memory_mb"`
	ReservedHostDiskMB   int64 `json:"reserved_host_disk_mb"`

	// PageSize bounds the objects of one PropertyCollector page.
	PageSize int32 `json:"page_size"`

	datastores *regexp.Regexp
}

// DefaultDatastoreTypes are nova's ALLOWED_DATASTORE_TYPES.
var DefaultDatastoreTypes = []string{"VMFS", "NFS", "NFS41", "vsan"}

// ParseConfig reads [plugin.config] as JSON; unknown keys are errors.
func ParseConfig(raw []byte) (Config, error) {
	c := Config{Service: "vcenter", DatastoreTypes: DefaultDatastoreTypes,
		CPUAllocationRatio: 4, RAMAllocationRatio: 1, DiskAllocationRatio: 1,
		ReservedHostMemoryMB: 512, PageSize: 1000}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("vmware plugin config: %w", err)
		}
	}
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("vmware plugin config: "+format, args...)
	}
	var err error
	if c.datastores, err = regexp.Compile(c.DatastoreRegex); err != nil {
		return bad("datastore_regex: %v", err)
	}
	switch {
	case c.Service == "":
		return bad("service must not be empty")
	case c.CPUAllocationRatio <= 0 || c.RAMAllocationRatio <= 0 || c.DiskAllocationRatio <= 0:
		return bad("allocation ratios must be positive (cpu %v, ram %v, disk %v)", c.CPUAllocationRatio, c.RAMAllocationRatio, c.DiskAllocationRatio)
	case c.ReservedHostCPUs < 0 || c.ReservedHostMemoryMB < 0 || c.ReservedHostDiskMB < 0:
		return bad("reserved amounts must not be negative")
	case c.PageSize < 1 || c.PageSize > 100000:
		return bad("page_size = %d, want 1..100000", c.PageSize)
	case len(c.DatastoreTypes) == 0:
		return bad("datastore_types must not be empty")
	case slices.Contains(c.Datacenters, "") || slices.Contains(c.Clusters, ""):
		return bad("an empty name in datacenters or clusters")
	}
	return c, nil
}
