package flock

import (
	"errors"
	"os"
)

// ErrLocked is TryLock's error while another open file holds the lock.
var ErrLocked = errors.New("locked by another holder")

// ErrUnsupported matches the error of a lock that cannot be had here: the
// file system or the platform has no flock.
var ErrUnsupported = errors.New("file locks are not supported here")

// Lock takes an exclusive lock on f, waiting while another holder has it.
func Lock(f *os.File) error { return lock(f, false) }

// TryLock takes an exclusive lock on f without waiting: ErrLocked when
// another holder has it.
func TryLock(f *os.File) error { return lock(f, true) }

// Unlock releases f's lock, leaving f open. Twice, on a file not locked,
// where locks are unsupported and after f was closed (which released the
// lock) it does nothing.
func Unlock(f *os.File) error {
	err := unlock(f)
	if errors.Is(err, os.ErrClosed) || errors.Is(err, ErrUnsupported) {
		return nil
	}
	return err
}

// unsupported is a lock error that says no lock is to be had: it matches
// ErrUnsupported and the error beneath (an errno, where there is one).
type unsupported struct{ err error }

func (e *unsupported) Error() string   { return e.err.Error() + " (" + ErrUnsupported.Error() + ")" }
func (e *unsupported) Unwrap() []error { return []error{ErrUnsupported, e.err} }
