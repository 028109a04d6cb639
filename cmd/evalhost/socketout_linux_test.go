package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// socketPair is a Unix stream socket pair: stdout, given to the writer,
// and client, its reader's end; blocking, as a client hands them over.
func socketPair(t *testing.T) (client, stdout *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, stdout = os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
	t.Cleanup(func() { client.Close(); stdout.Close() })
	return client, stdout
}

// A stream socket on stdout is written whole to a reader that takes it
// late, its open file left blocking, also once another holder made it
// non-blocking (serve's stdin, when one socket is both: the plain write
// failed there with EAGAIN); a deadline ends a write that waits for room,
// and so does Close, which may be called twice; a peer that closed is
// EPIPE, without SIGPIPE.
func TestSocketWriter(t *testing.T) {
	// The package's spare reaper (prestart) may start meanwhile: not this
	// test's.
	leakcheck.Check(t, leakcheck.Options{FDs: true, IgnoreProcess: func(cmdline string) bool {
		return strings.HasPrefix(cmdline, "evalhost-reaper")
	}})
	nonblock := func(t *testing.T, f *os.File) bool {
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fl&unix.O_NONBLOCK != 0
	}
	t.Run("whole, to a late reader", func(t *testing.T) {
		for _, shared := range []bool{false, true} {
			client, stdout := socketPair(t)
			if shared { // as pollableInput leaves a socket that is stdin too
				if err := unix.SetNonblock(int(stdout.Fd()), true); err != nil {
					t.Fatal(err)
				}
			}
			w := socketOutput(stdout)
			if w == nil {
				t.Fatal("no writer for a stream socket")
			}
			want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB, many times the socket's buffer
			done := make(chan error, 1)
			go func() {
				_, err := w.Write(want)
				done <- err
			}()
			testkit.WaitNoRoom(t, stdout) // the write waits for the reader
			got := make([]byte, len(want))
			_, err := io.ReadFull(client, got)
			if err != nil || <-done != nil || !bytes.Equal(got, want) {
				t.Fatalf("shared non-blocking %v: read %v, the bytes the same: %v", shared, err, bytes.Equal(got, want))
			}
			if nonblock(t, client) || nonblock(t, stdout) != shared {
				t.Errorf("the open file's O_NONBLOCK changed")
			}
			w.Close()
		}
	})
	for _, tc := range []struct {
		name string
		end  func(w *socketWriter)
		want error
	}{
		{"a deadline", func(w *socketWriter) { w.SetWriteDeadline(time.Now()) }, os.ErrDeadlineExceeded},
		{"Close", func(w *socketWriter) { w.Close(); w.Close() }, os.ErrClosed},
	} {
		t.Run(tc.name+" ends a waiting write", func(t *testing.T) {
			_, stdout := socketPair(t)
			w := socketOutput(stdout)
			defer w.Close()
			done := make(chan error, 1)
			go func() {
				_, err := w.Write(make([]byte, 8<<20))
				done <- err
			}()
			testkit.WaitNoRoom(t, stdout)
			tc.end(w)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Errorf("the waiting write ended with %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("EPIPE", func(t *testing.T) {
		client, stdout := socketPair(t)
		w := socketOutput(stdout)
		defer w.Close()
		client.Close()
		if _, err := w.Write([]byte("late\n")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("a write with the reader gone: %v, want EPIPE", err)
		}
	})
}
