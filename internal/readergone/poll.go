package readergone

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollWatch waits in poll(2), with no timeout, for fd's error or hang-up
// condition, or for stop's byte on a pipe of its own: one thread held, no
// periodic wake-up. It owns fd: stop closes it, as does a failure to
// start. POLLHUP is asked though Linux reports it unasked, in case a poll
// reports only what it was asked (macOS builds its poll on kqueue).
func pollWatch(fd int, gone func()) (stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	rc, err := r.SyscallConn()
	wake := -1
	if err == nil {
		err = rc.Control(func(f uintptr) { wake = int(f) }) // r stays open until the wait ends
	}
	if err != nil {
		r.Close()
		w.Close()
		unix.Close(fd)
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLHUP}, {Fd: int32(wake), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err == unix.EINTR {
				continue
			} else if err != nil {
				return
			}
			switch {
			case fds[1].Revents != 0: // stop
				return
			case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				gone()
				return
			case fds[0].Revents != 0:
				// A condition this wait cannot clear (POLLNVAL, or one not
				// asked for) would return at once for ever: give up the
				// watch, not a core.
				return
			}
		}
	}()
	return func() {
		_, _ = w.Write([]byte{0})
		<-done
		r.Close()
		w.Close()
		unix.Close(fd)
	}, nil
}
