// Command vmware is the VMware vCenter inventory plugin: a wasip1 reactor
// built on govmomi, whose SOAP client reaches the granted vCenter through
// guest.Transport (the host's HTTP capability). It reports one node per
// vCenter cluster with explicit VCPU, MEMORY_MB and DISK_GB inventories;
// package vcenter holds the code and the arithmetic (and where it differs
// from nova's in-tree driver).
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o vmware.wasm ./plugins/vmware
//
// The engine grants it the vCenter and holds the credentials:
//
//	[plugin]
//	path = "build/plugins/vmware.wasm"
//	[plugin.services]
//	vcenter = { url = "https://vc.example.com", auth = "vcenter", user = "svc-rpengine", password_file = "vc.pw" }
//	[plugin.config]
//	clusters = ["gold"]              # optional: default all
//	datastore_regex = "^shared-"     # optional
//	cpu_allocation_ratio = 4.0
//	reserved_host_memory_mb = 512
//
// It must never hold a credential (the host logs in, adds the session
// cookie and logs in again on NotAuthenticated), never call vCenter per
// object (one PropertyCollector retrieval per listing), and never report
// a cluster as deleted without vCenter's ManagedObjectNotFound for it.
package main
