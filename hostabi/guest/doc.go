// Package guest is the plugin SDK: a plugin's main package calls Run with
// its implementation, and this package provides the wasm exports of the
// host ABI (see hostabi/ABI.md), the memory handling and the JSON framing.
//
// It builds only for GOOS=wasip1. It must never reach outside the sandbox
// except through the host functions declared in imports_wasip1.go.
package guest
