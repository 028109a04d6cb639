//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// dupFile is a descriptor of f's own, close-on-exec, or nil when there is
// none to take (stdin closed).
func dupFile(f *os.File) *os.File {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), f.Name())
}
