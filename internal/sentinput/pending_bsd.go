//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package sentinput

import "golang.org/x/sys/unix"

// fionread is FIONREAD, _IOR('f', 127, int), which x/sys/unix leaves out
// on these systems.
const fionread = 0x4004667f

// pending is how many bytes fd holds to be read (FIONREAD).
func pending(fd uintptr) (int, bool) {
	n, err := unix.IoctlGetInt(int(fd), fionread)
	return n, err == nil
}
