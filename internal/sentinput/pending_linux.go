package sentinput

import "golang.org/x/sys/unix"

// pending is how many bytes fd holds to be read (FIONREAD).
func pending(fd uintptr) (int, bool) {
	n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	return n, err == nil
}
