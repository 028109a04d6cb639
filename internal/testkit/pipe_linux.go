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
// when poll gives its writing end no POLLOUT. A socket's writer waits once
// what it sent and its reader has not taken reaches its send buffer
// (SIOCOUTQ counts the queued buffers' whole size, as the send's own check
// does, against SO_SNDBUF); poll's POLLOUT goes at a quarter of it, while
// writes still pass.
//
// The reader's last read must come before the flood: a socket's writer
// that waits is woken only when the queue falls to a quarter of its
// buffer (the same POLLOUT), so a read that takes it below the buffer but
// not that low leaves the writer waiting with room a fresh write would get,
// and the count never reaches the buffer (seen: 178,432 of 212,992, serve's
// write waiting). It fails tb after 30 s.
func WaitNoRoom(tb testing.TB, w *os.File) {
	tb.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(w.Fd()), &st); err != nil {
		tb.Fatal(err)
	}
	socket := st.Mode&unix.S_IFMT == unix.S_IFSOCK
	deadline := time.Now().Add(30 * time.Second)
	for {
		full, queued, size := false, 0, 0
		if socket {
			var err error
			if queued, err = unix.IoctlGetInt(int(w.Fd()), unix.SIOCOUTQ); err != nil {
				tb.Fatal(err)
			}
			if size, err = unix.GetsockoptInt(int(w.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF); err != nil {
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
		if time.Now().After(deadline) && socket {
			tb.Fatalf("%s still has room after 30 s: %d of %d bytes queued (a writer read from since it began to wait waits on)", w.Name(), queued, size)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s still has room after 30 s", w.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
