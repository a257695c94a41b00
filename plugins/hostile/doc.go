// Command hostile is an inventory plugin that misbehaves on command, for
// the sandbox's tests: its [plugin.config] names an attack (trap, spin,
// hog, a gigantic answer, opening files, dialling sockets, calling a
// service it was not granted, reading the environment...) and the
// operation to make it in. It is also the tests' probe of what a plugin
// can see (HTTP, the clock, logging).
//
// Every attack that could succeed reports its loot as a node, so a test
// that gets nodes back knows the sandbox leaked; a thwarted one returns
// the error it met. The raw subpackage breaks the ABI itself.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared. Never
// deploy it.
package main
