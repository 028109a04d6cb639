//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package main

import (
	"os/signal"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sigIgnored says whether sig is ignored now, which before run notifies
// of it is whether evalhost was started ignoring it (a shell's trap "",
// nohup, a supervisor's SIG_IGN). os/signal.Ignored knows that only of
// SIGINT and SIGHUP, whose inherited SIG_IGN Go's runtime keeps; job
// control's SIGTSTP, SIGTTIN and SIGTTOU it leaves to the kernel until
// notified, and does not report their SIG_IGN: so the kernel is asked
// (rt_sigaction, reading only; the handler comes first in every
// architecture's struct sigaction but MIPS's). Of the others (SIGQUIT,
// SIGTERM, SIGUSR1, SIGUSR2) nothing can tell: Go's runtime installs its
// handler over their inherited SIG_IGN before any of evalhost runs.
func sigIgnored(sig syscall.Signal) bool {
	if signal.Ignored(sig) {
		return true
	}
	var act [8]uint64 // larger than any kernel's struct sigaction
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0); e != 0 {
		return false
	}
	const sigIGN = 1 // SIG_IGN, the handler's value
	return *(*uintptr)(unsafe.Pointer(&act[0])) == sigIGN
}
