package wasmhost

import "syscall"

// childProcAttr makes the kernel kill the plugin host if the engine dies,
// so a spinning guest never outlives it. (The plugin host also exits when
// its stdin closes, but a spinning one never reads.)
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
