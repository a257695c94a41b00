// Package conformance is the test suite `engine plugin test` runs against
// any plugin, in the spirit of `go test`: the ABI, describe, named
// configuration errors, the shape of the listings, two listings that
// agree, the time and memory an answer takes against the plugin's limits,
// and the services used against those declared and granted. Each check
// yields one PASS, FAIL or SKIP line with a short reason.
//
// It loads plugins only through internal/wasmhost, with the engine's own
// sandbox and limits, and must never write anywhere: no Placement, no
// state file. Every value from the plugin it quotes is cut short.
package conformance
