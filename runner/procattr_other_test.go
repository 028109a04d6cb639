//go:build !linux

package runner

import "syscall"

// testProcAttr: a test's runner leads its own group; without a parent-death
// signal it exits when its request pipe closes with the test process.
func testProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
