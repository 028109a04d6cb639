//go:build !linux

package rawio

import (
	"os"
	"syscall"
)

type rawConn struct{}

// New returns nil: raw calls are used on Linux alone (see the package doc).
func New(f *os.File) *File { return nil }

// Read is never reached: New returns no File here.
func (r *File) Read(p []byte) (int, error) { return r.f.Read(p) }

// Write is never reached: New returns no File here.
func (r *File) Write(p []byte) (int, error) { return r.f.Write(p) }

// ReadFD is read(2) on fd, for a callback of syscall.RawConn.Read; EINTR is
// retried.
func ReadFD(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
