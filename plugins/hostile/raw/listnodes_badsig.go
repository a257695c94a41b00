//go:build wasip1 && badsig

package main

// listNodes takes one parameter and returns an i32: not the ABI's shape.
//
//go:wasmexport rpengine_list_nodes
func listNodes(n uint32) uint32 { return uint32(nodes()) }
