//go:build wasip1

package guest

import "github.com/rpengine/rpengine/hostabi"

//go:wasmexport rpengine_map_events
func exportMapEvents(p uintptr, n uint32) uint64 { return op(hostabi.ExportMapEvents, p, n) }

//go:wasmexport rpengine_read_nodes
func exportReadNodes(p uintptr, n uint32) uint64 { return op(hostabi.ExportReadNodes, p, n) }

//go:wasmexport rpengine_recent_nodes
func exportRecentNodes(p uintptr, n uint32) uint64 { return op(hostabi.ExportRecentNodes, p, n) }
