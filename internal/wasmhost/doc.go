// Package wasmhost runs inventory plugins: Go programs compiled to
// GOOS=wasip1 reactors, loaded in a wazero sandbox with no filesystem, no
// sockets, no environment but GOMEMLIMIT, no real clock unless granted,
// a memory cap, an answer cap and a per-call time limit. HTTP goes only
// to services granted by name, with credentials the host adds.
//
// Load checks the module (exports and their signatures, imports, ABI
// version) and detects its optional operations; every call is serialised
// on one instance, and after any failure the instance is discarded and
// the next call gets a fresh one, so a failed call poisons nothing and
// returns nothing. By default the plugin runs in a plugin host process
// (this same binary, see childmain.go) that is killed when a call overruns;
// RATIONALE.md has the measurements. Reloading a plugin is the daemon's
// (internal/ops/daemon): it loads the new one beside the old and swaps
// them between cycles.
//
// Answers are decoded as they stream out of the plugin, within Limits and
// a budget of decoded memory: JSON (answer.go, guard.go), or the binary
// records the host offers for listings (records.go); what the plugin prints
// reaches the engine only as attributes of log records tagged with its
// name (output.go).
//
// It must never hand a plugin a credential or a host resource that the ABI
// (hostabi/ABI.md) does not grant, never return a partial answer as a
// success, never hold a whole answer before checking its limits, and never
// copy a plugin's output to the engine's streams raw.
package wasmhost
