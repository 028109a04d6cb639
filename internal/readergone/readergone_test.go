package readergone

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// waits are the ways a reader is waited for here: the platform's (epoll on
// Linux) and poll(2), the fallback elsewhere, tested on Linux too.
var waits = []struct {
	name string
	wait waitFunc
}{{"platform", watchFD}, {"poll", pollWatch}}

// output is one output a test writes: our end and the reader's.
type output struct {
	ours   io.ReadWriter
	theirs io.ReadWriteCloser
}

// A reader that goes is seen without a write, on each output kind the
// contract names; until then the watch says nothing, also while the
// output has room for writing; a write then fails with EPIPE (ECONNRESET
// on TCP), which NoteWrite also takes for gone.
func TestGoneWithoutAWrite(t *testing.T) {
	for _, w := range waits {
		for _, tc := range []struct {
			name string
			make func(t *testing.T) output
			// beforeGone is what the reader does that must not count as its
			// leaving (nil: nothing), with what shows it took effect.
			beforeGone func(t *testing.T, o output)
			// goes makes the reader go; a write of ours first when late is
			// set (a TCP peer's plain close is seen only through the reset
			// a write draws).
			goes   func(t *testing.T, o output)
			late   bool
			socket bool // watched by the platform's wait on Linux alone
		}{
			{name: "pipe", make: pipeOutput, goes: closeTheirs},
			{name: "unix socket", make: socketOutput, goes: closeTheirs, socket: true},
			{name: "unix socket shut for writing", make: socketOutput, beforeGone: shutTheirWriting, goes: closeTheirs, socket: true},
			{name: "tcp closed with bytes unread", make: tcpOutput, goes: closeTheirsUnread, socket: true},
			{name: "tcp closed plainly", make: tcpOutput, beforeGone: readAllThenClose, late: true, socket: true},
		} {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				if tc.socket && w.name == "platform" && runtime.GOOS != "linux" {
					t.Skip("a socket is watched on Linux alone")
				}
				leakcheck.Check(t, leakcheck.Options{FDs: true})
				o := tc.make(t)
				wr := watchWith(o.ours, w.wait)
				defer wr.Stop()
				if wr.stop == nil {
					t.Fatal("not watched")
				}
				if _, err := o.ours.Write([]byte("reply\n")); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(o.theirs, make([]byte, 6)); err != nil {
					t.Fatal(err)
				}
				if tc.beforeGone != nil {
					tc.beforeGone(t, o)
				}
				select {
				case <-wr.Gone():
					t.Fatal("the reader is said gone while it is there")
				default:
				}
				if tc.goes != nil {
					tc.goes(t, o)
				}
				if tc.late {
					if _, err := o.ours.Write([]byte("late\n")); err != nil {
						t.Fatal(err)
					}
				}
				select {
				case <-wr.Gone():
				case <-time.After(30 * time.Second):
					t.Fatal("the reader's leaving was not seen within 30 s")
				}
				_, err := o.ours.Write([]byte("later\n"))
				if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
					t.Errorf("a write with the reader gone: %v, want EPIPE or ECONNRESET", err)
				}
			})
		}
	}
}

func pipeOutput(t *testing.T) output {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return output{ours: w, theirs: r}
}

func socketOutput(t *testing.T) output {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0) // macOS has no SOCK_CLOEXEC; nothing here execs
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "reader")
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	return output{ours: ours, theirs: theirs}
}

func tcpOutput(t *testing.T) output {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	theirs, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ours, err := ln.Accept()
	if err != nil {
		theirs.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	return output{ours: ours, theirs: theirs}
}

func closeTheirs(t *testing.T, o output) { o.theirs.Close() }

// closeTheirsUnread closes the reader with bytes of ours in its buffer,
// which makes its kernel reset the connection.
func closeTheirsUnread(t *testing.T, o output) {
	if _, err := o.ours.Write([]byte("unread\n")); err != nil {
		t.Fatal(err)
	}
	awaitReadable(t, o.theirs)
	o.theirs.Close()
}

// shutTheirWriting ends the reader's requests, as a client that wrote
// them all may; it reads on. Our end reads its end of file, so the
// hang-up, were there one, is there.
func shutTheirWriting(t *testing.T, o output) {
	f := o.theirs.(*os.File)
	if err := unix.Shutdown(int(f.Fd()), unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	readEOF(t, o.ours)
}

// readAllThenClose closes the reader once it read everything: a plain
// FIN, which our end reads as its end of file.
func readAllThenClose(t *testing.T, o output) {
	o.theirs.Close()
	readEOF(t, o.ours)
}

func readEOF(t *testing.T, r io.Reader) {
	t.Helper()
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("our end read %d bytes, %v; want the end of file", n, err)
	}
}

// awaitReadable returns once c has bytes to read.
func awaitReadable(t *testing.T, c io.ReadWriteCloser) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var perr error
	if err := rc.Control(func(fd uintptr) {
		n, perr = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 30_000)
	}); err != nil || perr != nil || n != 1 {
		t.Fatalf("the reader got nothing to read within 30 s: %d, %v, %v", n, err, perr)
	}
}

// What the contract leaves unwatched gets a Watcher whose Gone stays open,
// with no goroutine or descriptor of its own.
func TestNotWatched(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T) io.Writer
	}{
		{"tty", func(t *testing.T) io.Writer {
			master, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			t.Cleanup(func() { master.Close(); tty.Close() })
			return tty
		}},
		{"regular file", func(t *testing.T) io.Writer {
			f, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"/dev/null", func(t *testing.T) io.Writer {
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"net.Pipe", func(t *testing.T) io.Writer {
			a, b := net.Pipe()
			t.Cleanup(func() { a.Close(); b.Close() })
			return a
		}},
		{"buffer", func(t *testing.T) io.Writer { return &bytes.Buffer{} }},
		{"closed pipe", func(t *testing.T) io.Writer {
			o := pipeOutput(t)
			o.ours.(*os.File).Close()
			return o.ours
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t, leakcheck.Options{FDs: true})
			wr := Watch(tc.make(t))
			if wr.stop != nil {
				t.Error("watched")
			}
			wr.Stop()
			select {
			case <-wr.Gone():
				t.Error("Gone is closed")
			default:
			}
		})
	}
}

// Stop ends a watch whose reader is still there, returning once its
// goroutine and descriptors are gone (leakcheck), and is safe twice and
// from two goroutines at once; it does not close Gone.
func TestStop(t *testing.T) {
	for _, w := range waits {
		t.Run(w.name, func(t *testing.T) {
			leakcheck.Check(t, leakcheck.Options{FDs: true})
			o := pipeOutput(t)
			wr := watchWith(o.ours, w.wait)
			if wr.stop == nil {
				t.Fatal("not watched")
			}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(wr.Stop)
			}
			wg.Wait()
			wr.Stop()
			select {
			case <-wr.Gone():
				t.Error("Stop closed Gone")
			default:
			}
		})
	}
}

// NoteWrite takes a write's EPIPE, however wrapped, for the reader's
// leaving, and no other error; it returns the error it was given.
func TestNoteWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		gone bool
	}{
		{"nil", nil, false},
		{"EPIPE", syscall.EPIPE, true},
		{"wrapped EPIPE", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}, true},
		{"in a message", fmt.Errorf("answer: %w", syscall.EPIPE), true},
		{"EAGAIN", syscall.EAGAIN, false},
		{"closed", os.ErrClosed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wr := Watch(&bytes.Buffer{})
			if got := wr.NoteWrite(tc.err); got != tc.err {
				t.Errorf("NoteWrite returned %v, want %v", got, tc.err)
			}
			select {
			case <-wr.Gone():
				if !tc.gone {
					t.Error("Gone is closed")
				}
			default:
				if tc.gone {
					t.Error("Gone is open")
				}
			}
		})
	}
}
