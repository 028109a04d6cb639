package runner

import "syscall"

// groupAttr puts a test's runner in its own process group (the host's SIGINT
// goes to the group) and kills it if the test binary dies.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
