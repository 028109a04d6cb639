//go:build unix

package runner

import "syscall"

// processGone reports whether no process has pid (another user's runs:
// EPERM).
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
