//go:build unix

package sentinput

import (
	"io"
	"os"
	"syscall"
)

// nonblocking reports whether rc's descriptor is in non-blocking mode:
// a read of it cannot wait.
func nonblocking(rc syscall.RawConn) bool {
	nb := false
	if rc.Control(func(fd uintptr) {
		fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nb = errno == 0 && fl&syscall.O_NONBLOCK != 0
	}) != nil {
		return false
	}
	return nb
}

// readNow reads what the descriptor holds, without waiting, a read
// deadline past or not: 0 and nil when it holds nothing.
func readNow(rc syscall.RawConn, p []byte) (n int, err error) {
	if cerr := rc.Control(func(fd uintptr) {
		for {
			n, err = syscall.Read(int(fd), p)
			if err != syscall.EINTR {
				return
			}
		}
	}); cerr != nil {
		return 0, cerr
	}
	switch {
	case err == syscall.EAGAIN:
		return 0, nil
	case err != nil:
		return 0, &os.PathError{Op: "read", Path: "stdin", Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
