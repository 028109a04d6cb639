//go:build unix

package sentinput

import (
	"io"
	"os"
	"syscall"
	"time"
)

// fileReader reads an *os.File in the poller without waiting through its
// descriptor (ReadNow).
type fileReader struct{ *os.File }

// fileNow is f as a nowReader, or nil when f is not non-blocking: a read
// of its descriptor would wait.
func fileNow(f *os.File) nowReader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if rc.Control(func(fd uintptr) {
		fl, err := fcntlGetfl(fd)
		nonblock = err == nil && fl&syscall.O_NONBLOCK != 0
	}) != nil || !nonblock {
		return nil
	}
	return fileReader{f}
}

func (f fileReader) SetReadDeadline(t time.Time) error { return f.File.SetReadDeadline(t) }

// ReadNow reads what the descriptor holds now.
func (f fileReader) ReadNow(p []byte) (n int, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
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
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func fcntlGetfl(fd uintptr) (int, error) {
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(fl), nil
}
