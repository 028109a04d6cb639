package bridge

import "syscall"

// commandAttr: a tool command leads its own process group (so it is killed
// whole) and dies with this process.
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
