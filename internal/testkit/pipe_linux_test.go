package testkit

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// socketPair is a blocking Unix stream socket pair: r the reader's end,
// w the writer's.
func socketPair(t *testing.T) (r, w *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "reader"), os.NewFile(uintptr(fds[1]), "writer")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// socketWriters flood a socket until its reader goes (EPIPE), as evalhost
// writes one: blocking sends, and non-blocking ones that wait in poll for
// POLLOUT (serve's socketWriter, in Go's poller). Each reports its end on
// done; waitNr is the system call it waits for room in.
var socketWriters = []struct {
	name   string
	flood  func(fd int, done chan<- error)
	waitNr int
}{
	{"blocking sends", func(fd int, done chan<- error) {
		p := make([]byte, 4<<20) // more than any send buffer: it waits inside the send
		for {
			if _, err := unix.SendmsgN(fd, p, nil, nil, unix.MSG_NOSIGNAL); err != nil {
				done <- err
				return
			}
		}
	}, unix.SYS_SENDMSG},
	{"non-blocking sends waiting in poll", func(fd int, done chan<- error) {
		p := make([]byte, 256<<10)
		for {
			_, err := unix.SendmsgN(fd, p, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
			if errors.Is(err, unix.EAGAIN) {
				_, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, -1)
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				done <- err
				return
			}
		}
	}, unix.SYS_PPOLL},
}

// probeSend is a non-blocking send of one byte on w: nil when a write
// would pass, EAGAIN when it would wait.
func probeSend(t *testing.T, w *os.File) error {
	t.Helper()
	_, err := unix.SendmsgN(int(w.Fd()), []byte{0}, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		t.Fatal(err)
	}
	return err
}

func hasPollOut(t *testing.T, w *os.File) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(w.Fd()), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// WaitNoRoom returns, on a socket whose reader read nothing, only when
// the writer waits: a write of its own would wait too, and the flood has
// not ended.
func TestWaitNoRoomSocket(t *testing.T) {
	for _, tc := range socketWriters {
		t.Run(tc.name, func(t *testing.T) {
			r, w := socketPair(t)
			done := make(chan error, 1)
			go tc.flood(int(w.Fd()), done)
			WaitNoRoom(t, w)
			if err := probeSend(t, w); !errors.Is(err, unix.EAGAIN) {
				t.Errorf("a write passed once WaitNoRoom returned: %v", err)
			}
			select {
			case err := <-done:
				t.Fatalf("the flood ended: %v", err)
			default:
			}
			r.Close()
			if err := <-done; !errors.Is(err, unix.EPIPE) {
				t.Errorf("the flood ended with %v, want EPIPE once its reader went", err)
			}
		})
	}
}

// WaitNoRoom's condition on a reader's last read: one after the writer
// began to wait, which takes the queue below the send buffer but not to a
// quarter of it, leaves the writer waiting (no POLLOUT, which is also what
// wakes a blocked send) with room a fresh write gets, so the count
// WaitNoRoom waits for never comes: serve's stalled-client test read the
// flood's first lines so, and failed now and then.
func TestWaitNoRoomSocketReadAfterTheWriterWaited(t *testing.T) {
	for _, tc := range socketWriters {
		t.Run(tc.name, func(t *testing.T) {
			r, w := socketPair(t)
			done := make(chan error, 1)
			go tc.flood(int(w.Fd()), done)
			WaitNoRoom(t, w) // nothing read yet: the writer waits, or is about to
			WaitThreadSyscall(t, os.Getpid(), tc.waitNr)
			if _, err := r.Read(make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			queued, err := unix.IoctlGetInt(int(w.Fd()), unix.SIOCOUTQ)
			if err != nil {
				t.Fatal(err)
			}
			size, err := unix.GetsockoptInt(int(w.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF)
			if err != nil {
				t.Fatal(err)
			}
			if queued >= size || queued <= size/4 {
				t.Fatalf("after one read %d of %d bytes are queued, want between a quarter and all", queued, size)
			}
			if hasPollOut(t, w) {
				t.Fatal("POLLOUT after one read: the waiting writer is woken")
			}
			if err := probeSend(t, w); err != nil {
				t.Errorf("a fresh write beside the waiting one: %v, want it to pass", err)
			}
			r.Close()
			<-done
		})
	}
}
