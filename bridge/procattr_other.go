//go:build !linux

package bridge

import "syscall"

// commandProcAttr puts a tool command in its own process group, so that
// what it starts is ended with it. Only Linux can tie its life to
// evalhost's (Pdeathsig).
func commandProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
