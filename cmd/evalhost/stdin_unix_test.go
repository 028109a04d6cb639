//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
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

// serve's output pipe is written through the poller while serve runs and
// is blocking again afterwards; a write the reader's end refused is done
// on the pipe itself, so its failure is the file's (EPIPE here; SIGPIPE on
// descriptor 1); a file is left alone.
func TestPollableOutput(t *testing.T) {
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	pr, pw := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
	defer pr.Close()
	defer pw.Close()
	out, restore := pollableOutput(pw)
	if out == io.Writer(pw) || !nonblocking(t, pw) {
		t.Fatal("a blocking pipe was not made pollable")
	}
	if _, err := out.Write([]byte("reply\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := pr.Read(buf); err != nil || string(buf[:n]) != "reply\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	pr.Close()
	if _, err := out.Write([]byte("late\n")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("write with the reader gone: %v, want EPIPE", err)
	}
	restore()
	if nonblocking(t, pw) {
		t.Error("the pipe was left non-blocking")
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "replies"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, restore := pollableOutput(f); got != io.Writer(f) {
		restore()
		t.Error("a regular file was replaced")
	}
}

// serve on a pipe whose reader left dies by SIGPIPE at its next write, as
// it did writing to descriptor 1 itself: the raw write's EPIPE is handed to
// os.Stdout. The test runs itself as the writer.
func TestPollableOutputSIGPIPE(t *testing.T) {
	if os.Getenv("EVALHOST_TEST_SIGPIPE") == "1" {
		out, _ := pollableOutput(os.Stdout)
		for {
			if _, err := out.Write([]byte("x\n")); err != nil {
				os.Exit(3) // an error instead of SIGPIPE
			}
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPollableOutputSIGPIPE$")
	cmd.Env = append(os.Environ(), "EVALHOST_TEST_SIGPIPE=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdout.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
		t.Fatalf("the writer ended with %v, want SIGPIPE", err)
	}
}
