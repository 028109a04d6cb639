package runner

import "syscall"

// testProcAttr: a test's runner leads its own group and dies with the test process.
func testProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
