package main

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketcallSendto is socketcall(2)'s number for sendto (linux/net.h).
const socketcallSendto = 11

// sendNow is sendto_linux.go's send on linux/386, whose syscall package has
// no SYS_SENDTO: through socketcall(2), as Go's own socket calls there go,
// since sendto's own number (369) came only with Linux 4.3.
func sendNow(fd int, p []byte) (uintptr, syscall.Errno) {
	args := [6]uintptr{uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)),
		unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL, 0, 0}
	n, _, errno := syscall.RawSyscall(syscall.SYS_SOCKETCALL, socketcallSendto, uintptr(unsafe.Pointer(&args)), 0)
	runtime.KeepAlive(p) // its address is in args, where the compiler cannot see it
	return n, errno
}
