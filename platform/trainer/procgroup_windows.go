package trainer

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// ownGroup starts cmd in a new process group (no console Ctrl+C from
// VetLens's console reaches it); cancel terminates the python process
// itself (exec's default, TerminateProcess). Not done on Windows: its
// worker processes (multiprocessing) are not stopped with it, and nothing
// stops the trainer when VetLens is killed; a job object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE would do both (docs/packaging.md,
// "Windows").
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}
