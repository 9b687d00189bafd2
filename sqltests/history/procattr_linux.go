package history

import (
	"os/exec"
	"syscall"
)

// dieWithParent stops the server when the test process dies without
// cleaning up (a panic, a test timeout), so no mariadbd outlives it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
