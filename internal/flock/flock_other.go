//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package flock

import (
	"errors"
	"os"
)

// Without flock every lock is unsupported.

var errNoFlock = &unsupported{os.NewSyscallError("flock", errors.ErrUnsupported)}

func lock(*os.File, bool) error { return errNoFlock }

func unlock(*os.File) error { return errNoFlock }
