// Package wasmhost runs inventory plugins: Go programs compiled to
// GOOS=wasip1 reactors, loaded in a wazero sandbox with no filesystem, no
// sockets, no environment but GOMEMLIMIT, a memory cap and a per-call time
// limit. It checks the ABI at load, serialises calls on one instance, and
// replaces an instance after any trap, so a failed call poisons nothing.
//
// It must never hand a plugin a credential or a host resource that the ABI
// (hostabi/ABI.md) does not grant, and never return a partial answer as a
// success.
package wasmhost
