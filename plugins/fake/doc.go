// Command fake is an inventory plugin for tests and the demo. It reports
// Ironic-like nodes, either generated from a seed or listed exactly in
// [plugin.config], and can inject faults (errors, panics, traps, spins,
// memory hogs) so the host's containment can be tested. It proves deletion
// (confirm_deleted) of any node not in its world, except unknown_nodes.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
// It never touches anything outside its own memory.
package main
