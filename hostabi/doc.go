// Package hostabi is the contract between the engine and its inventory
// plugins: the ABI version, the names of the exports and host functions,
// the records that cross the boundary and the frames of HTTP calls.
//
// It compiles for both the host and GOOS=wasip1, so it must never import
// wazero, the engine, or anything that reaches the network or the disk.
// The host side lives in internal/wasmhost, the guest SDK in hostabi/guest,
// the test harness in internal/testing/guesttest. ABI.md is the normative
// description; this package is its Go form; RATIONALE.md says why.
//
// hostabi and hostabi/guest are their own Go module
// (github.com/rpengine/rpengine/hostabi, standard library only), so a
// plugin author's go.mod pulls the SDK and the records, not the engine.
// The host imports these records and never hostabi/guest.
package hostabi
