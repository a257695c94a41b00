//go:build wasip1 && !abi2

package main

//go:wasmexport rpengine_abi_version
func abiVersion() int32 { return 1 }
