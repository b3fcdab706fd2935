//go:build !windows

package trainer

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group, so cancel reaches the
// trainer's workers too (SIGTERM to the group), and SIGTERM when VetLens
// dies (kill -9), so no orphan goes on training.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
