//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/rawio"
)

// pollableInput returns in, when it is a blocking pipe or socket, as a
// file read through Go's poller, and one P for the whole process unless
// GOMAXPROCS is set. serve reads its requests from one such file for its
// whole life. A blocking read holds a thread and its P until the next
// request; the runtime takes the P back for the runner's frames (a thread
// wake per cell), and a second P woke threads that found nothing to do.
// Polled with one P, a warm cell cost about half the CPU between requests
// and no latency (docs/architecture.md). Its reads are raw system calls
// (internal/rawio), which do not wake the runtime's monitor thread. A tty
// or a file is left alone: its open file may be shared, and its flags are
// not ours to change.
//
// restore puts the pipe back in blocking mode for whoever reads it next,
// and ends a read still under way; call it once the reader is done.
func pollableInput(in io.Reader) (r io.Reader, restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	polled, restore := pollableDup(f)
	if polled == nil {
		return in, restore
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if raw := rawio.New(polled); raw != nil {
		return raw, restore
	}
	return polled, restore
}

// pollableOutput returns out, when it is a blocking pipe or socket, as a
// file written through Go's poller with raw system calls (internal/rawio),
// as pollableInput reads: serve's replies then do not wake the runtime's
// monitor thread either. A write that meets a closed pipe is done again on
// out, whose EPIPE on descriptor 1 ends the process by SIGPIPE as before.
// restore puts the pipe back in blocking mode; call it once the last write
// returned.
func pollableOutput(out io.Writer) (w io.Writer, restore func()) {
	f, ok := out.(*os.File)
	if !ok {
		return out, func() {}
	}
	polled, restore := pollableDup(f)
	if polled == nil {
		return out, restore
	}
	raw := rawio.New(polled)
	if raw == nil {
		restore()
		return out, func() {}
	}
	return epipeWriter{raw: raw, out: f}, restore
}

// epipeWriter writes raw, and what a broken pipe refused to out.
type epipeWriter struct {
	raw *rawio.File
	out *os.File
}

func (w epipeWriter) Write(p []byte) (int, error) {
	n, err := w.raw.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		m, err := w.out.Write(p[n:])
		return n + m, err
	}
	return n, err
}

// pollableDup returns a non-blocking duplicate of f in Go's poller when f
// is a blocking pipe or socket, else nil. The flag is the open pipe's,
// shared with f: restore (also returned with nil) closes the duplicate,
// which ends a read or write under way and waits for it, and puts the
// pipe back in blocking mode.
func pollableDup(f *os.File) (polled *os.File, restore func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, func() {}
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
		return nil, func() {}
	}
	polled = os.NewFile(uintptr(fd), f.Name())
	return polled, func() {
		_ = polled.Close()
		_ = rc.Control(func(s uintptr) { _ = syscall.SetNonblock(int(s), false) })
	}
}
