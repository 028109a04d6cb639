//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package termrelay

// The BSDs' (macOS's too) names for tcgetattr's and tcsetattr's ioctls;
// Linux's are TCGETS and TCSETS.

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
