//go:build !openbsd

package termrelay

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pushInput puts typed into terminal fd's input queue, as if typed there
// (TIOCSTI, one byte per call).
func pushInput(fd int, typed []byte) error {
	for i := range typed {
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.TIOCSTI), uintptr(unsafe.Pointer(&typed[i]))); errno != 0 {
			return errno
		}
	}
	return nil
}
