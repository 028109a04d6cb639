package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// Bytes written through a File arrive whole and in order, also when the
// pipe fills and the writer waits in the poller; the reader waits for
// bytes that are not there yet and sees io.EOF at the end.
func TestReadWriteThroughAPipe(t *testing.T) {
	pr, pw := pipe(t)
	r, w := New(pr), New(pw)
	if r == nil || w == nil {
		t.Fatal("New refused os.Pipe's ends")
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: more than the pipe holds
	done := make(chan error, 1)
	go func() {
		n, err := w.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(want))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A read past its deadline and a read of a closed file fail as the file's
// own would: os.ErrDeadlineExceeded, os.ErrClosed.
func TestDeadlineAndClose(t *testing.T) {
	pr, _ := pipe(t)
	r := New(pr)
	pr.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	pr.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() { _, err := r.Read(make([]byte, 8)); errc <- err }()
	testkit.WaitParked(t, "rawio.(*File).Read(", "runtime_pollWait(") // the close wakes a waiting read
	pr.Close()
	if err := <-errc; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read of a closed file: %v", err)
	}
}

// A write to a pipe whose reader is gone fails with EPIPE.
func TestWriteBrokenPipe(t *testing.T) {
	pr, pw := pipe(t)
	w := New(pw)
	pr.Close()
	if _, err := w.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write with no reader: %v", err)
	}
}

// A blocking descriptor is refused: a raw call on it could block.
func TestNewRefusesBlocking(t *testing.T) {
	fds := make([]int, 2)
	if err := syscall.Pipe2(fds, syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "blocking")
	defer f.Close()
	syscall.Close(fds[1])
	if New(f) != nil {
		t.Fatal("New took a blocking pipe")
	}
}

// WriteSome writes what the pipe takes and returns instead of waiting: a
// full pipe gives a short count and no error; what went is read intact.
func TestWriteSomeStopsWhenFull(t *testing.T) {
	pr, pw := pipe(t)
	r, w := New(pr), New(pw)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: more than the pipe holds
	n, err := w.WriteSome(want)
	if err != nil || n <= 0 || n >= len(want) {
		t.Fatalf("WriteSome into an empty pipe = %d, %v; want a short count, no error", n, err)
	}
	if m, err := w.WriteSome(want[n:]); err != nil || m != 0 {
		t.Fatalf("WriteSome into a full pipe = %d, %v; want 0, no error", m, err)
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, want[:n]) {
		t.Fatalf("read back %v: the bytes WriteSome counted differ", err)
	}
	pr.Close()
	if _, err := w.WriteSome([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("WriteSome with no reader: %v", err)
	}
}
