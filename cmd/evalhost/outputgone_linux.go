package main

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchReader closes g once out, a pipe or a socket, has no reader left: a
// pipe's error condition (POLLERR: its read end closed), a Unix socket's
// hang-up (its peer closed). An epoll instance of its own watches a
// duplicate of out for those alone, and waits in Go's poller, so nothing
// wakes until then; the flags of out's open file are left as they are. A
// TCP peer that closed is not seen before a write fails (its FIN may mean
// only the end of its requests). stop ends the watch.
func watchReader(out io.Writer, g *outputGone) (stop func()) {
	f, ok := out.(*os.File)
	if !ok {
		return func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return func() {}
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
			return
		}
		dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if dup < 0 {
		return func() {}
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(dup)
		return func() {}
	}
	// No events asked: EPOLLERR and EPOLLHUP are reported unasked, and a
	// pipe's room for writing (EPOLLOUT) never wakes it.
	ev := unix.EpollEvent{Fd: int32(dup)}
	if unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, dup, &ev) != nil || unix.SetNonblock(ep, true) != nil {
		unix.Close(ep)
		unix.Close(dup)
		return func() {}
	}
	epf := os.NewFile(uintptr(ep), "stdout's reader") // non-blocking: in Go's poller
	eprc, err := epf.SyscallConn()
	if err != nil {
		epf.Close()
		unix.Close(dup)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var evs [1]unix.EpollEvent
		err := eprc.Read(func(fd uintptr) bool {
			n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&evs[0])), 1, 0, 0, 0)
			return e == 0 && n > 0
		})
		if err == nil {
			g.close()
		}
	}()
	return func() {
		_ = epf.SetReadDeadline(time.Unix(1, 0)) // ends the wait
		<-done
		epf.Close()
		unix.Close(dup)
	}
}
