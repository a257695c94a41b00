//go:build !linux

package testenv

import "os/exec"

// dieWithParent has no portable equivalent; Main and t.Cleanup stop the
// process instead.
func dieWithParent(*exec.Cmd) {}
