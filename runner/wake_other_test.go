//go:build !linux

package runner

import "syscall"

// wakeMain sends sig to the runner; without tgkill, to the process.
func wakeMain(pid int, sig syscall.Signal) { _ = syscall.Kill(pid, sig) }
