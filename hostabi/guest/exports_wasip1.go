//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/rpengine/rpengine/hostabi"
)

// pinned keeps buffers handed to the host reachable until freed; the Go
// wasm GC does not move objects, so reachability is all pinning needs.
var pinned = map[uintptr][]byte{}

// lastOut keeps the last answer alive until the next call.
var lastOut []byte

//go:wasmexport rpengine_abi_version
func abiVersion() int32 { return hostabi.Version }

//go:wasmexport rpengine_alloc
func alloc(n uint32) uintptr {
	b := make([]byte, max(n, 1))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	pinned[p] = b
	return p
}

//go:wasmexport rpengine_free
func free(p uintptr) { delete(pinned, p) }

//go:wasmexport rpengine_describe
func exportDescribe(p uintptr, n uint32) uint64 { return op(hostabi.ExportDescribe, p, n) }

//go:wasmexport rpengine_configure
func exportConfigure(p uintptr, n uint32) uint64 { return op(hostabi.ExportConfigure, p, n) }

//go:wasmexport rpengine_list_nodes
func exportListNodes(p uintptr, n uint32) uint64 { return op(hostabi.ExportListNodes, p, n) }

//go:wasmexport rpengine_list_instances
func exportListInstances(p uintptr, n uint32) uint64 { return op(hostabi.ExportListInstances, p, n) }

//go:wasmexport rpengine_confirm_deleted
func exportConfirmDeleted(p uintptr, n uint32) uint64 { return op(hostabi.ExportConfirmDeleted, p, n) }

// op runs one operation on the input the host wrote at p and returns the
// packed location of the answer, kept alive until the next call.
func op(export string, p uintptr, n uint32) uint64 {
	lastOut = nil // let the previous answer go before making the next
	collect()
	var in []byte
	if b := pinned[p]; uint32(len(b)) >= n {
		in = b[:n]
	}
	lastOut = Handle(plugin, export, in)
	if len(lastOut) == 0 {
		return 0
	}
	return hostabi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(lastOut)))), uint32(len(lastOut)))
}
