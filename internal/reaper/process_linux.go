package reaper

import (
	"syscall"
	"unsafe"
)

// awaitExit blocks until process pid has exited, without reaping it
// (waitid with WNOWAIT).
func awaitExit(pid int) {
	const pPID, wNOWAIT = 1, 0x1000000 // P_PID, WNOWAIT (linux/wait.h)
	var info [128]byte                 // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}
