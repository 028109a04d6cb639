//go:build !linux

package shell

import "syscall"

// The termios ioctls of the BSDs and macOS.
const (
	ioctlGetTermios = syscall.TIOCGETA
	ioctlSetTermios = syscall.TIOCSETA
)
