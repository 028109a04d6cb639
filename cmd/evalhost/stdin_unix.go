//go:build unix

package main

import (
	"io"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// pollableInput returns in, when it is a blocking pipe or socket, as a
// file read through Go's poller, and one P for the whole process unless
// GOMAXPROCS is set. serve reads its requests from one such file for its
// whole life. A blocking read holds a thread and its P until the next
// request; the runtime takes the P back for the runner's frames (a thread
// wake per cell), and a second P woke threads that found nothing to do.
// Polled with one P, a warm cell cost about half the CPU between requests
// and no latency (docs/architecture.md). A tty or a file is left alone: its
// open file may be shared, and its flags are not ours to change.
//
// restore puts the pipe back in blocking mode for whoever reads it next,
// and ends a read still under way; call it once the reader is done.
func pollableInput(in io.Reader) (r io.Reader, restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	fd := -1
	_ = rc.Control(func(s uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(s), &st) != nil {
			return
		}
		if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
			return
		}
		if fl, err := unix.FcntlInt(s, unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			return // already polled, or unknown: as it is
		}
		dup, err := syscall.Dup(int(s))
		if err != nil {
			return
		}
		syscall.CloseOnExec(dup)
		if syscall.SetNonblock(dup, true) != nil {
			syscall.Close(dup)
			return
		}
		fd = dup
	})
	if fd < 0 {
		return in, func() {}
	}
	polled := os.NewFile(uintptr(fd), f.Name())
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	return polled, func() {
		_ = polled.Close() // ends a read under way, and waits for it
		// The flag is the open pipe's, shared with in.
		_ = rc.Control(func(s uintptr) { _ = syscall.SetNonblock(int(s), false) })
	}
}
