//go:build !linux

package readergone

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchFD waits for fd's reader to go in poll(2), on a pipe alone: macOS
// builds its poll on kqueue, where a socket's hang-up (EV_EOF) comes when
// its peer only shut down its writing, which would take the end of a
// client's requests for its leaving; a socket is left to a write's EPIPE.
// It owns fd: stop closes it, as does a failure to start.
func watchFD(fd int, gone func()) (stop func(), err error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		unix.Close(fd)
		return nil, errors.New("readergone: only a pipe is watched here")
	}
	return pollWatch(fd, gone)
}
