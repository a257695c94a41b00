package ironictest

import (
	"os/exec"
	"syscall"
)

// dieWithParent kills Ironic if the test binary dies without running its
// cleanups (a panic, a timeout).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
