//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// heldLock is an flock(2)ed lock file. flock locks belong to an open file
// description, so two goroutines of one process would exclude each other
// too, but not on NFS (an fcntl lock there, the process's): Lock's
// in-process lock (lock_local.go) does that.
type heldLock struct{ f *os.File }

// try takes the lock without waiting; false means another holder has it.
// The lock file is removed on release, so a file locked after a wait may
// no longer be the one at path: then try starts again on the new one.
func (h *heldLock) try(path string) (bool, error) {
	for {
		// O_NONBLOCK: a FIFO there is not waited on (a regular file's
		// flock ignores it), O_NOCTTY: nor a terminal taken for this
		// process's; either is then refused.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o600)
		if err != nil && isSymlink(path) { // ELOOP on Linux and macOS, EMLINK on FreeBSD
			return false, fmt.Errorf("%w: %s is a symbolic link, not a lock file evalhost made; it is not followed, since whoever planted it could point it anywhere: remove it", ErrBadLockFile, trustdir.Shown(path))
		}
		if err != nil {
			if st, lerr := os.Lstat(path); lerr == nil && !st.Mode().IsRegular() {
				return false, notLockFile(path, st.Mode()) // a socket's ENXIO, a directory's EISDIR
			}
			return false, err
		}
		if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
			f.Close()
			return false, notLockFile(path, st.Mode())
		}
		// A file system without locks is an error here, unlike where the
		// platform has no flock (lock_other.go): Lock is then refused.
		if err := lockTry(f); err != nil {
			f.Close()
			if errors.Is(err, flock.ErrLocked) {
				return false, nil
			}
			return false, fmt.Errorf("%s: %w", trustdir.Shown(path), err)
		}
		locked, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(locked, now) {
			h.f = f
			return true, nil
		}
		f.Close() // a holder removed it after we opened it: lock the new one
	}
}

// notLockFile refuses what holds the lock file's name and is no regular
// file: it is not evalhost's to flock or remove.
func notLockFile(path string, mode fs.FileMode) error {
	return fmt.Errorf("%w: %s is %s, not a lock file evalhost made: remove it", ErrBadLockFile, trustdir.Shown(path), kindOf(mode.Type()))
}

// release removes the lock file while still holding it, so no one can
// lock the removed file and believe it is the current one, then unlocks.
func (h *heldLock) release(path string) error {
	if h.f == nil {
		return nil
	}
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // removed by hand: the lock was held all the same
	}
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	h.f = nil
	return err
}

func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// lockTry is flock.TryLock for the lock file; tests make it always succeed,
// as an fcntl lock on NFS does between two opens of one process.
var lockTry = flock.TryLock
