package main

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// canRaise says whether evalhost can die of sig (raise): whether sig's
// default action ends a process (the others ignore, stop or continue).
func canRaise(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGCHLD, syscall.SIGCONT, syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN,
		syscall.SIGTTOU, syscall.SIGURG, syscall.SIGWINCH:
		return false
	}
	return sig > 0 && sig <= 64
}

// raise makes evalhost die of sig, its clean-up done. Go's os/signal
// restores its own handling, not the kernel's default (a SIGQUIT would dump
// goroutines, a SIGUSR1 be ignored), so the default is set with a raw
// rt_sigaction; a zeroed struct sigaction is SIG_DFL without flags in
// every architecture's layout. No core of evalhost, which did not crash:
// RLIMIT_CORE 0, and not dumpable, since a core_pattern pipe
// (systemd-coredump, apport) is called whatever RLIMIT_CORE says. The
// signal goes to this thread, unblocked, so it is taken as the call
// returns. It returns only if the process lives on (then exitAs exits).
func raise(sig syscall.Signal) {
	runtime.LockOSThread()
	if sig != syscall.SIGKILL {
		var dfl [8]uint64 // larger than any kernel's struct sigaction
		if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0); e != 0 {
			return
		}
	}
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	var set unix.Sigset_t
	set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
}
