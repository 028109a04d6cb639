package host

import (
	"os"
	"syscall"
)

// growPipe asks for a pipe buffer of pipeSize so a cell that prints in bulk
// rarely waits for the host to drain the pipe. Failure is harmless: the pipe
// keeps its default size.
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
		})
	}
}

// wakeThread sends sig to the runner's main thread, whose tid is its pid:
// a process-directed signal could land on another thread and leave the
// main thread's blocking call running.
func wakeThread(pid int, sig syscall.Signal) {
	_ = syscall.Tgkill(pid, pid, sig)
}
