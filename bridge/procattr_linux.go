package bridge

import "syscall"

// commandProcAttr puts a tool command in its own process group, so that
// what it starts is ended with it, and has the kernel kill it if evalhost
// dies first.
func commandProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
