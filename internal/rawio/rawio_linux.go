package rawio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

type rawConn struct{ rc syscall.RawConn }

// New returns f wrapped, or nil when f is not a non-blocking file in the
// poller (see the package doc).
func New(f *os.File) *File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		fl, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = errno == 0 && fl&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblock {
		return nil
	}
	// A non-blocking file outside the poller (os.NewFile could not add it)
	// cannot wait for readiness: its deadlines fail with this error.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return nil
	}
	return &File{f: f, rawConn: rawConn{rc}}
}

// Read reads up to len(p) bytes, waiting in the poller while none are there.
func (r *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		n, rerr = ReadFD(fd, p)
		return rerr != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, r.wrap("read", err)
	case rerr != nil:
		return 0, r.wrap("read", rerr)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting in the poller while the file is full.
func (r *File) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			chunk := p[n:]
			if len(chunk) > maxRW {
				chunk = chunk[:maxRW]
			}
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(chunk))), uintptr(len(chunk)))
			switch e {
			case 0:
				n += int(m)
				continue
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			errno = e
			return true
		}
		return true
	})
	switch {
	case err != nil:
		return n, r.wrap("write", err)
	case errno != 0:
		return n, r.wrap("write", errno)
	}
	return n, nil
}

// maxRW is the most a call reads or writes, as package os's poller caps it.
const maxRW = 1 << 30

// wrap makes err what the file's own Read or Write returns: a closed
// file's poller error becomes os.ErrClosed, as package os maps it.
func (r *File) wrap(op string, err error) error {
	if _, ok := err.(syscall.Errno); !ok && !errors.Is(err, os.ErrDeadlineExceeded) {
		if _, cerr := r.f.Read(nil); errors.Is(cerr, os.ErrClosed) {
			err = os.ErrClosed
		}
	}
	return &os.PathError{Op: op, Path: r.f.Name(), Err: err}
}

// ReadFD is read(2) on fd as a raw system call, for a callback of a
// non-blocking file's syscall.RawConn.Read; EINTR is retried.
func ReadFD(fd uintptr, p []byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		switch e {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, e
	}
}
