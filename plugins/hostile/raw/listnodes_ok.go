//go:build wasip1 && !badsig

package main

//go:wasmexport rpengine_list_nodes
func listNodes(p uintptr, n uint32) uint64 { return nodes() }
