package remotetest

import (
	"os/exec"
	"syscall"
)

// setOwnGroup puts cmd in a process group of its own.
func setOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// dieWithParent also has cmd killed when this process dies, so a fixture's
// server never outlives a test binary that was killed.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
