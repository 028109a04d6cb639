package rawio

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// rawConn holds the calls' state in the File, with the callbacks made
// once, so that a read or write allocates nothing; the mutexes keep
// concurrent readers (writers) off each other's state, as the poller would
// serialise their calls anyway.
type rawConn struct {
	rc syscall.RawConn

	rmu    sync.Mutex
	rbuf   []byte
	rn     int
	rerr   error
	readFn func(uintptr) bool

	wmu     sync.Mutex
	wbuf    []byte
	wn      int
	werr    syscall.Errno
	writeFn func(uintptr) bool
	someFn  func(uintptr) bool
}

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
	r := &File{f: f, rawConn: rawConn{rc: rc}}
	r.readFn, r.writeFn, r.someFn = r.readOnce, r.writeAll, r.writeSome
	return r
}

// Read reads up to len(p) bytes, waiting in the poller while none are there.
func (r *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rmu.Lock()
	defer r.rmu.Unlock()
	r.rbuf = p
	err := r.rc.Read(r.readFn)
	n, rerr := r.rn, r.rerr
	r.rbuf, r.rerr = nil, nil
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

// readOnce is Read's callback: false asks the poller to wait.
func (r *File) readOnce(fd uintptr) bool {
	r.rn, r.rerr = readFD(fd, r.rbuf)
	return r.rerr != syscall.EAGAIN
}

// Write writes all of p, waiting in the poller while the file is full.
func (r *File) Write(p []byte) (int, error) { return r.write(p, r.writeFn) }

// WriteSome writes what of p the file takes now, without waiting: n <
// len(p) with a nil error means the file is full. A caller that must bound
// a wait (a context's end) arms that only when it would wait.
func (r *File) WriteSome(p []byte) (int, error) { return r.write(p, r.someFn) }

// write runs one of the write callbacks on p through the poller.
func (r *File) write(p []byte, fn func(uintptr) bool) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.wbuf, r.wn, r.werr = p, 0, 0
	err := r.rc.Write(fn)
	n, errno := r.wn, r.werr
	r.wbuf = nil
	switch {
	case err != nil:
		return n, r.wrap("write", err)
	case errno != 0:
		return n, r.wrap("write", errno)
	}
	return n, nil
}

// writeSome is WriteSome's callback: writeAll, without waiting when full.
func (r *File) writeSome(fd uintptr) bool {
	r.writeAll(fd)
	return true
}

// writeAll is Write's callback: it writes until all is written, an error,
// or EAGAIN (false: wait in the poller, then go on from r.wn).
func (r *File) writeAll(fd uintptr) bool {
	for r.wn < len(r.wbuf) {
		chunk := r.wbuf[r.wn:]
		if len(chunk) > maxRW {
			chunk = chunk[:maxRW]
		}
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(chunk))), uintptr(len(chunk)))
		switch e {
		case 0:
			r.wn += int(m)
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.werr = e
		return true
	}
	return true
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

// readFD is read(2) on fd as a raw system call; EINTR is retried.
func readFD(fd uintptr, p []byte) (int, error) {
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
