//go:build wasip1 && badimport

package main

// launch is not a host function of ABI v1.
//
//go:wasmimport rpengine launch_missiles
func launch() int32

func init() {
	if mode == "never" {
		launch()
	}
}
