//go:build !linux

package bridge

import "syscall"

// commandAttr: a tool command leads its own process group, so it is killed
// whole. There is no parent-death signal outside Linux; the call's context
// and the command's wait delay bound it instead.
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
