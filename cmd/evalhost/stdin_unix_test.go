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

	"github.com/evalhost/evalhost/internal/rawio"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// blockingPipe is a pipe whose ends block, as a parent's pipe does
// (os.Pipe's are in Go's poller), closed when the test ends.
func blockingPipe(t *testing.T, rname, wname string) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), rname), os.NewFile(uintptr(fds[1]), wname)
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	return r, w
}

// A pipe is read through the poller while serve runs, through an open of
// its own: the open file serve was given stays blocking (its flags are
// shared with whoever else holds it); restore ends a read under way; a file
// is left alone.
func TestPollableInput(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	pr, pw := blockingPipe(t, "stdin", "client")
	in, restore := pollableInput(pr)
	if _, ok := in.(*rawio.File); !ok {
		t.Fatalf("a blocking pipe was not made pollable: %T", in)
	}
	if nonblocking(t, pr) {
		t.Error("the open file serve was given was made non-blocking")
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

// serve's output pipe is written through the poller while serve runs,
// through an open of its own, the open file serve was given left blocking;
// a write the reader's end refused fails with EPIPE; a file is left alone.
func TestPollableOutput(t *testing.T) {
	pr, pw := blockingPipe(t, "client", "stdout")
	out, restore := pollableOutput(pw)
	if _, ok := out.(*rawio.File); !ok {
		t.Fatalf("a blocking pipe was not made pollable: %T", out)
	}
	if nonblocking(t, pw) {
		t.Error("the open file serve was given was made non-blocking")
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

// serve on a pipe whose reader left gets EPIPE at its next write, even on
// descriptor 1, where Go's default is to die of SIGPIPE: the raw write's
// error is not handed to os.Stdout any more, so serve can end its work
// (cmd/evalhost/outputgone.go). The test runs itself as the writer.
func TestPollableOutputEPIPE(t *testing.T) {
	if os.Getenv("EVALHOST_TEST_SIGPIPE") == "1" {
		out, _ := pollableOutput(os.Stdout)
		for {
			if _, err := out.Write([]byte("x\n")); err != nil {
				if errors.Is(err, syscall.EPIPE) {
					os.Exit(3)
				}
				os.Exit(4)
			}
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPollableOutputEPIPE$")
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
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the writer ended with %v, want exit status 3 (EPIPE), not SIGPIPE", err)
	}
}

// A socket's reads are polled through a non-blocking duplicate, ordinary
// calls (rawio's raw ones would block the P if a holder of the shared open
// file put it back in blocking mode), blocking again after restore; its
// writes go through a socketWriter (Linux), its flags left alone.
func TestPollableSocket(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, peer := os.NewFile(uintptr(fds[0]), "stdio"), os.NewFile(uintptr(fds[1]), "client")
	defer s.Close()
	defer peer.Close()
	in, restore := pollableInput(s)
	if _, ok := in.(*os.File); !ok || in == io.Reader(s) || !nonblocking(t, s) {
		t.Fatalf("a blocking socket was not polled with ordinary calls: %T", in)
	}
	if _, err := peer.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	restore()
	if nonblocking(t, s) {
		t.Error("the socket was left non-blocking")
	}
	out, restore := pollableOutput(s)
	defer restore()
	if _, sw := out.(*socketWriter); sw != (runtime.GOOS == "linux") || nonblocking(t, s) {
		t.Errorf("a socket's writes: %T, want a socketWriter on Linux, and the socket left blocking", out)
	}
}

// A holder of the open file serve was given (a client that kept its copy,
// a pipeline's other command) that puts it in blocking mode does not make
// serve's raw calls block: its polled open is its own. Had it been the
// shared one, the read below would hold the test's only P in the kernel
// and the write that ends it would never run.
func TestPollableSharedFlags(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	pr, pw := blockingPipe(t, "stdin", "client")
	in, restore := pollableInput(pr)
	defer restore()
	if err := unix.SetNonblock(int(pr.Fd()), false); err != nil { // the other holder
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, _ := in.Read(buf)
		got <- string(buf[:n])
	}()
	runtime.Gosched() // let the read start, on the only P
	if _, err := pw.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "line\n" {
		t.Fatalf("read %q", s)
	}
}
