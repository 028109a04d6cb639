package shell

import "syscall"

// The termios ioctls, named differently on each system.
const (
	ioctlGetTermios = syscall.TCGETS
	ioctlSetTermios = syscall.TCSETS
)
