//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package flock

import (
	"os"
	"syscall"
)

// flockCall is flock(2); tests replace it to return errnos on demand.
var flockCall = syscall.Flock

func lock(f *os.File, try bool) error {
	how := syscall.LOCK_EX
	if try {
		how |= syscall.LOCK_NB
	}
	return call(f, how)
}

func unlock(f *os.File) error { return call(f, syscall.LOCK_UN) }

// call runs flock on f's descriptor, retrying EINTR: Go's handlers restart
// most calls, yet flock may still fail with it (a handler installed
// without SA_RESTART by C code, a stop and continue).
func call(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return os.NewSyscallError("flock", err)
	}
	var errno error
	// Control, not Fd: it fails on a closed file (os.ErrClosed) instead of
	// handing out a descriptor number that may be reused by then.
	if err := rc.Control(func(fd uintptr) {
		for {
			if errno = flockCall(int(fd), how); errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		// Control fails only on a closed file, with an internal error that
		// os.File's own methods turn into os.ErrClosed too.
		return os.NewSyscallError("flock", os.ErrClosed)
	}
	switch {
	case errno == nil:
		return nil
	case errno == syscall.EWOULDBLOCK:
		return ErrLocked
	case noLocks(errno):
		return &unsupported{os.NewSyscallError("flock", errno)}
	}
	return os.NewSyscallError("flock", errno)
}

// noLocks reports whether errno says the file system has no flock.
// EOPNOTSUPP and ENOTSUP are one errno on Linux, two on macOS and BSD.
func noLocks(errno error) bool {
	return errno == syscall.ENOLCK || errno == syscall.ENOSYS ||
		errno == syscall.EOPNOTSUPP || errno == syscall.ENOTSUP
}
