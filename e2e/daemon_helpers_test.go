package e2e

import (
	"os/exec"
	"syscall"
	"testing"
)

// startDaemon starts `engine run --config cfg` with its output kept in
// logs; it is killed when the test ends (and with the test binary).
func startDaemon(t *testing.T, cfg string) (cmd *exec.Cmd, logs *syncBuffer) {
	t.Helper()
	cmd = exec.Command(engineBin(t), "run", "--config", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logs = &syncBuffer{}
	cmd.Stderr, cmd.Stdout = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, logs
}
