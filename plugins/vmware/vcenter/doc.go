// Package vcenter lists a vCenter's clusters as inventory nodes for the
// VMware plugin, and proves a cluster deleted, with govmomi over any
// http.RoundTripper (guest.Transport in the sandbox).
//
// # One retrieval
//
// A listing is a container view of the root folder over Datacenter,
// Folder, ClusterComputeResource, HostSystem and Datastore, read with one
// RetrievePropertiesEx (paged by page_size) asking only for the
// properties the arithmetic needs; then the view is destroyed. nova asks
// per cluster and per host collection; at 100 clusters × 20 hosts this is
// one round trip instead of hundreds. The answer is read by a scanner
// made for its shape (scan.go), ten times cheaper than govmomi's
// reflective decoder, which reads only what the scanner refuses (a fault,
// a missingSet, a type it does not know); ../PROFILE.md has the figures.
//
// # The arithmetic, against nova's (nova/virt/vmwareapi)
//
// nova's vm_util.get_stats_from_cluster and driver.update_provider_tree,
// for each cluster:
//
//   - VCPU: total = the sum of numCpuThreads of the hosts that are
//     connected and not in maintenance; max_unit = the largest such host;
//     reserved = reserved_host_cpus; ratio = cpu_allocation_ratio.
//   - MEMORY_MB: total = the sum over the same hosts of memorySize in MiB
//     (rounded down per host); max_unit = the largest; reserved =
//     reserved_host_memory_mb (default 512); ratio = ram_allocation_ratio.
//   - DISK_GB: total = the sum of the capacities of the cluster's
//     datastores that are accessible, not in maintenance, of an allowed
//     type and match datastore_regex, in GiB (rounded down once, on the
//     sum); reserved = reserved_host_disk_mb in GiB rounded up; ratio =
//     disk_allocation_ratio.
//
// Where this plugin differs, and why:
//
//   - DISK_GB max_unit is the largest datastore's capacity, not its free
//     space as in nova: free space moves with every disk written, so
//     nova rewrites the inventory every period; usage is what Placement's
//     allocations already account for. An idle cycle stays one request.
//   - Reserved amounts larger than the total are capped at the total
//     (Placement refuses reserved > total; nova's write would fail).
//   - A cluster with no usable host (all in maintenance or disconnected)
//     is reported with the totals of all its hosts and maintenance set, so
//     the engine reserves everything: nothing new is scheduled there, and
//     the allocations of the instances still on it stay valid. nova would
//     report a total of 0, which Placement cannot store, and removing the
//     inventory is refused while allocations use it.
//   - A class whose total is 0 (no datastore matches) is left out.
//   - Ratios default to nova's initial_*_allocation_ratio (4.0, 1.0, 1.0);
//     datastore_types defaults to nova's VMFS, NFS, NFS41, vsan (vcsim's
//     local datastores are OTHER: the tests and the demo add it).
//   - The provider UUID is derived from the vCenter's instance UUID and
//     the cluster's reference (ClusterUUID), not random as in nova: a
//     restarted engine, or another instance of the plugin, finds the same
//     provider, and confirm_deleted can map a UUID back to the cluster.
//
// # Deletion
//
// A cluster missing from a listing is only a candidate. ConfirmDeleted
// asks vCenter for the cluster's name by its reference: the
// ManagedObjectNotFound fault is the proof; any other answer is present
// or unknown.
//
// It must never hold or ask for a credential, and never call vCenter per
// object in a listing.
package vcenter
