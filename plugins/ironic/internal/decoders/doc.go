// Package decoders holds the node page decoders the Ironic plugin was
// measured with, so the choice in hostabi/RATIONALE.md ("JSON projection")
// can be re-measured: the host projection the plugin uses, the same
// projection run inside the guest, encoding/json into a small struct,
// encoding/json into gophercloud's nodes.Node, and (GOEXPERIMENT=jsonv2)
// a jsontext token decoder. Each is an ironic.PageDecoder producing the
// same nodes.
//
// It is for benchmarks and their tests only; the plugin must never import
// it (it would pull gophercloud and net/http into the Wasm module).
package decoders
