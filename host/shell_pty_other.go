//go:build !linux

package host

import "syscall"

// The termios ioctls of the BSDs and macOS.
const (
	ioctlGetTermios = syscall.TIOCGETA
	ioctlSetTermios = syscall.TIOCSETA
)
