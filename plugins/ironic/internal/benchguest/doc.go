// Command benchguest is a Wasm plugin for benchmarks only: it fetches the
// node pages once through guest.HTTP (as the Ironic plugin would), then
// on every list_nodes call decodes them again with the decoder named in
// its config (decoders.Run) and answers one summary node whose name is the
// time of each stage as the guest itself measured it ("decode,merge,encode"
// in nanoseconds), and whose resource class is the node count. See
// plugins/ironic/bench_test.go. It must never ship.
package main
