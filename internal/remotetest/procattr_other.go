//go:build !linux

package remotetest

import (
	"os/exec"
	"syscall"
)

func setOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// dieWithParent: only Linux can tie a child's life to its parent's; the
// teardown watcher covers the rest.
func dieWithParent(cmd *exec.Cmd) { setOwnGroup(cmd) }
