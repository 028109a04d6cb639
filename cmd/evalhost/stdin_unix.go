//go:build unix

package main

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/rawio"
)

// pollableInput returns in, when it is a blocking pipe or socket, as a
// file read through Go's poller, and one P for the whole process unless
// GOMAXPROCS is set. serve and mcp (stdio) read their requests from one
// such file for their whole life. A blocking read holds a thread and its P until the next
// request; the runtime takes the P back for the runner's frames (a thread
// wake per cell), and a second P woke threads that found nothing to do.
// Polled with one P, a warm cell cost about half the CPU between requests
// and no latency (docs/architecture.md). A pipe's reads are raw system
// calls (internal/rawio), which do not wake the runtime's monitor thread;
// a socket's are ordinary ones (see pollableDup). A tty or a file is left
// alone: its open file may be shared, and its flags are not ours to change.
//
// restore ends a read still under way, and puts a socket back in blocking
// mode for whoever reads it next; call it once the reader is done.
func pollableInput(in io.Reader) (r io.Reader, restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	polled, private, restore := pollableDup(f, false)
	if polled == nil {
		return in, restore
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if private {
		if raw := rawio.New(polled); raw != nil {
			return raw, restore
		}
	}
	return polled, restore
}

// pollableOutput returns out, when it is a blocking pipe, as a file
// written through Go's poller with raw system calls (internal/rawio), as
// pollableInput reads: serve's replies then do not wake the runtime's
// monitor thread either. A write that meets a closed pipe fails with
// EPIPE, not SIGPIPE (watchedOutput says the reader is gone). A stream
// socket is written by a socketWriter (Linux), which leaves its open
// file's flags alone; a tty or a file is left alone. restore closes the
// pipe's polled open (the socket's writer), which ends a write under way;
// call it once the last write returned, or to end one.
func pollableOutput(out io.Writer) (w io.Writer, restore func()) {
	f, ok := out.(*os.File)
	if !ok {
		return out, func() {}
	}
	polled, private, restore := pollableDup(f, true)
	if polled == nil {
		if sw := socketOutput(f); sw != nil {
			return sw, func() { _ = sw.Close() }
		}
		return out, restore
	}
	var raw *rawio.File
	if private {
		raw = rawio.New(polled)
	}
	if raw == nil {
		restore()
		return out, func() {}
	}
	return raw, restore // its writes take deadlines (serve/stall.go)
}

// pollableDup returns a non-blocking open of f's pipe or socket in Go's
// poller when f is a blocking one, else nil.
//
// A pipe is opened again through /proc/self/fd (reading, or writing when
// write is set): a new open file of the same pipe, private (true), whose
// O_NONBLOCK no other holder of f's open file sees or can clear. That
// matters for raw calls (internal/rawio), which would block holding the
// thread and its P (with one P, the whole process; a GC waits for it too)
// if a process sharing f's open file (a client that kept its copy, a
// pipeline's other commands, 2>&1) put it back in blocking mode; and f's
// flags are left as they are, also when serve is killed.
//
// A socket, or a pipe that cannot be opened again (no /proc, another
// owner's pipe), is duplicated instead, for reading only: the flag is then
// the open file's, shared with f, and restore puts it back. restore (also
// returned with nil) closes the polled file, which ends a read or write
// under way and waits for it.
func pollableDup(f *os.File, write bool) (polled *os.File, private bool, restore func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false, func() {}
	}
	fd := -1
	_ = rc.Control(func(s uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(s), &st) != nil {
			return
		}
		t := st.Mode & syscall.S_IFMT
		if t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
			return
		}
		if fl, err := unix.FcntlInt(s, unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			return // already polled, or unknown: as it is
		}
		if t == syscall.S_IFIFO {
			if fd, private = reopenPipe(int(s), &st, write); private {
				return
			}
		}
		if write {
			return
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
		return nil, false, func() {}
	}
	polled = os.NewFile(uintptr(fd), f.Name())
	if private {
		return polled, true, func() { _ = polled.Close() }
	}
	return polled, false, func() {
		_ = polled.Close()
		_ = rc.Control(func(s uintptr) { _ = syscall.SetNonblock(int(s), false) })
	}
}

// reopenPipe opens the pipe fd (whose stat is st) again, non-blocking, for
// reading or writing; false when it cannot, or the open is not that pipe.
func reopenPipe(fd int, st *syscall.Stat_t, write bool) (int, bool) {
	mode := syscall.O_RDONLY
	if write {
		mode = syscall.O_WRONLY
	}
	p, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), mode|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	var pst syscall.Stat_t
	if syscall.Fstat(p, &pst) != nil || pst.Dev != st.Dev || pst.Ino != st.Ino {
		syscall.Close(p)
		return -1, false
	}
	return p, true
}
