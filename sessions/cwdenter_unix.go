//go:build unix

package sessions

import (
	"errors"

	"golang.org/x/sys/unix"
)

// errNoEnter is checkCwd's refusal of a directory this user may not
// enter: the interpreter's start failed there as "reaper: run
// /proc/self/exe: permission denied", which named neither the directory
// nor the cause.
var errNoEnter = errors.New("permission denied: this user may not enter it (it lacks search permission, x, on it); pick another directory, or give this user x on it")

// canEnter says whether this user may make abs its working directory.
func canEnter(abs string) error {
	for {
		err := unix.Access(abs, unix.X_OK)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EACCES:
			return errNoEnter
		default:
			return err
		}
	}
}
