//go:build !linux

package wasmhost

import "syscall"

// childProcAttr: outside Linux there is no parent-death signal; the
// plugin host exits when its stdin closes.
func childProcAttr() *syscall.SysProcAttr { return nil }
