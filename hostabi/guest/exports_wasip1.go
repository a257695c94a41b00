//go:build wasip1

package guest

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/rpengine/rpengine/hostabi"
)

// pinned keeps buffers handed to the host reachable until freed; the Go
// wasm GC does not move objects, so reachability is all pinning needs.
var pinned = map[uintptr][]byte{}

// lastOut keeps the last response alive until the next call.
var lastOut []byte

//go:wasmexport rpengine_abi_version
func abiVersion() int32 { return hostabi.Version }

//go:wasmexport rpengine_alloc
func alloc(n uint32) uintptr {
	b := make([]byte, n)
	if n == 0 {
		b = make([]byte, 1)
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	pinned[p] = b
	return p
}

//go:wasmexport rpengine_free
func free(p uintptr) { delete(pinned, p) }

//go:wasmexport rpengine_configure
func configure(p uintptr, n uint32) uint64 {
	return respond(func() any {
		var r hostabi.ConfigureResponse
		name, err := plugin.Configure(input(p, n))
		r.Name = name
		setErr(&r.Error, err)
		return r
	})
}

//go:wasmexport rpengine_list_nodes
func listNodes(p uintptr, n uint32) uint64 {
	return respond(func() any {
		var req hostabi.ListNodesRequest
		var r hostabi.ListNodesResponse
		if err := json.Unmarshal(input(p, n), &req); err != nil {
			setErr(&r.Error, fmt.Errorf("decode list_nodes request: %w", err))
			return r
		}
		nodes, err := plugin.ListNodes(req)
		if err == nil {
			r.Nodes, r.Complete = nodes, true
		}
		setErr(&r.Error, err)
		return r
	})
}

//go:wasmexport rpengine_list_instances
func listInstances(p uintptr, n uint32) uint64 {
	return respond(func() any {
		var r hostabi.ListInstancesResponse
		inst, err := plugin.ListInstances()
		r.Instances = inst
		setErr(&r.Error, err)
		return r
	})
}

func input(p uintptr, n uint32) []byte {
	b := pinned[p]
	if uint32(len(b)) < n {
		return nil
	}
	return b[:n]
}

func setErr(e *hostabi.Error, err error) {
	if err != nil {
		e.Error = err.Error()
	}
}

// respond runs op, turning a panic into an in-band error so the instance
// stays usable, and returns the packed location of the JSON answer.
func respond(op func() any) (packed uint64) {
	defer func() {
		if r := recover(); r != nil {
			packed = output(mustJSON(hostabi.Error{Error: fmt.Sprintf("plugin panic: %v", r)}))
		}
	}()
	if plugin == nil {
		return output(mustJSON(hostabi.Error{Error: "plugin did not call guest.Run"}))
	}
	return output(mustJSON(op()))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(hostabi.Error{Error: "encode response: " + err.Error()})
	}
	return b
}

func output(b []byte) uint64 {
	lastOut = b
	if len(b) == 0 {
		return 0
	}
	return hostabi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)))
}
