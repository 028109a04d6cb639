package testkit

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WaitPipeFull returns once the pipe r reads from is all but full (less
// than 64 KiB free), for a test whose writer floods it and must be held
// by a reader that reads nothing. Not "less than a page free": a pipe's
// pages are filled write by write, and a writer blocked on a 1 MiB pipe was
// seen with 5 KiB free. A writer short of full keeps flooding until it
// waits. It fails tb after 30 s.
func WaitPipeFull(tb testing.TB, r *os.File) {
	tb.Helper()
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			tb.Fatal(err)
		}
		if n > size-64<<10 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the pipe holds %d of %d bytes after 30 s", n, size)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitNoRoom returns once w, the writing end of a pipe or a Unix stream
// socket whose reader reads nothing (the test keeps a copy of the writer's
// end to ask), is full: a writer's next write waits. A pipe has no room
// when poll gives its writing end no POLLOUT; a socket's writer waits once
// what it sent and its reader has not taken (SIOCOUTQ) reaches its send
// buffer (poll's POLLOUT goes at a quarter of it, while writes still
// pass). It fails tb after 30 s.
func WaitNoRoom(tb testing.TB, w *os.File) {
	tb.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(w.Fd()), &st); err != nil {
		tb.Fatal(err)
	}
	socket := st.Mode&unix.S_IFMT == unix.S_IFSOCK
	deadline := time.Now().Add(30 * time.Second)
	for {
		full := false
		if socket {
			queued, err := unix.IoctlGetInt(int(w.Fd()), unix.SIOCOUTQ)
			if err != nil {
				tb.Fatal(err)
			}
			size, err := unix.GetsockoptInt(int(w.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF)
			if err != nil {
				tb.Fatal(err)
			}
			full = queued >= size
		} else {
			fds := []unix.PollFd{{Fd: int32(w.Fd()), Events: unix.POLLOUT}}
			n, err := unix.Poll(fds, 0)
			if err != nil && err != unix.EINTR {
				tb.Fatal(err)
			}
			full = n == 0 && err == nil
		}
		if full {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s still has room after 30 s", w.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
