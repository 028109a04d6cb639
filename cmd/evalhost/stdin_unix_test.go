//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// A pipe is read through the poller while serve runs and is blocking again
// afterwards (its flags are shared with whoever reads it next); restore
// ends a read under way; a file is left alone.
func TestPollableInput(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil { // blocking, as a parent's pipe is
		t.Fatal(err)
	}
	pr, pw := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer pr.Close()
	defer pw.Close()
	in, restore := pollableInput(pr)
	if in == io.Reader(pr) || !nonblocking(t, pr) {
		t.Fatal("a blocking pipe was not made pollable")
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS is %d with a polled pipe, want 1", n)
	}
	if _, err := pw.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	readEnded := make(chan error, 1)
	go func() {
		_, err := in.Read(buf)
		readEnded <- err
	}()
	restore()
	if err := <-readEnded; err == nil {
		t.Error("a read under way did not end with restore")
	}
	if nonblocking(t, pr) {
		t.Error("the pipe was left non-blocking")
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "requests"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, restore := pollableInput(f); got != io.Reader(f) {
		restore()
		t.Error("a regular file was replaced")
	}
}
