package readergone

import (
	"errors"
	"io"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Watcher says when the reader of one output is gone.
type Watcher struct {
	gone     chan struct{}
	goneOnce sync.Once
	stopOnce sync.Once
	stop     func() // ends the watch; nil when nothing is watched
}

// Watch starts watching the reader of w (see the package's contract for
// what is watched).
func Watch(w io.Writer) *Watcher { return watchWith(w, watchFD) }

// waitFunc waits for fd's reader to go in a goroutine, and calls gone
// then. It owns fd: stop closes it, as does a failure to start.
type waitFunc func(fd int, gone func()) (stop func(), err error)

func watchWith(w io.Writer, wait waitFunc) *Watcher {
	wr := &Watcher{gone: make(chan struct{})}
	if fd, ok := watchable(w); ok {
		if stop, err := wait(fd, wr.markGone); err == nil {
			wr.stop = stop
		}
	}
	return wr
}

// Gone is closed once the reader is known gone.
func (wr *Watcher) Gone() <-chan struct{} { return wr.gone }

// NoteWrite closes Gone when err, a write's, says the reader is gone
// (EPIPE), and returns err.
func (wr *Watcher) NoteWrite(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		wr.markGone()
	}
	return err
}

// Stop ends the watch, and returns once its goroutine has ended.
func (wr *Watcher) Stop() {
	wr.stopOnce.Do(func() {
		if wr.stop != nil {
			wr.stop()
		}
	})
}

func (wr *Watcher) markGone() { wr.goneOnce.Do(func() { close(wr.gone) }) }

// watchable returns a close-on-exec duplicate of w's descriptor when w is
// a pipe or a socket: what a watch can wait on without holding w's own
// descriptor, which w's owner may close at any time.
func watchable(w io.Writer) (dup int, ok bool) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return -1, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, false
	}
	dup = -1
	err = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
			return
		}
		dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	return dup, err == nil && dup >= 0
}
