//go:build !linux

package runner

import "syscall"

// groupAttr puts a test's runner in its own process group (the host's SIGINT
// goes to the group); without Pdeathsig, each test's cleanup ends it.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
