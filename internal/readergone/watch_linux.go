package readergone

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchFD waits for fd's reader to go in an epoll instance of its own,
// which waits in Go's poller: nothing wakes until then. It owns fd: stop
// closes it, as does a failure to start.
func watchFD(fd int, gone func()) (stop func(), err error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// No events asked: EPOLLERR and EPOLLHUP are reported unasked, and a
	// pipe's room for writing (EPOLLOUT) never wakes it.
	ev := unix.EpollEvent{Fd: int32(fd)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(ep)
		unix.Close(fd)
		return nil, err
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		unix.Close(fd)
		return nil, err
	}
	epf := os.NewFile(uintptr(ep), "readergone epoll") // non-blocking: in Go's poller
	rc, err := epf.SyscallConn()
	if err != nil {
		epf.Close()
		unix.Close(fd)
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var evs [1]unix.EpollEvent
		// A wait of 0 never sleeps, so never fails with EINTR: false is
		// only "nothing yet", and the poller waits for the next edge.
		err := rc.Read(func(ep uintptr) bool {
			n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, ep, uintptr(unsafe.Pointer(&evs[0])), 1, 0, 0, 0)
			return e == 0 && n > 0
		})
		if err == nil {
			gone()
		}
	}()
	return func() {
		_ = epf.SetReadDeadline(time.Unix(1, 0)) // ends the wait
		<-done
		epf.Close()
		unix.Close(fd)
	}, nil
}
