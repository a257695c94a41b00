package testenv

import (
	"os/exec"
	"syscall"
)

// dieWithParent kills a service if the test binary dies without running
// its cleanups (a panic, a timeout, a forgotten Main). The signal follows
// the OS thread that started the child; Go only ends threads of goroutines
// that lock one and exit, which test code here does not do.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
