//go:build linux && !386

package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendNow is one send(2) of p that never blocks (MSG_DONTWAIT) nor raises
// SIGPIPE (MSG_NOSIGNAL). Raw: it never blocks, so the runtime has nothing
// to take back (internal/rawio).
func sendNow(fd int, p []byte) (uintptr, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))),
		uintptr(len(p)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	return n, errno
}
