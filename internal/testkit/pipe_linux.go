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
