//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package streamsink

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
)

// An artifact being written is flock(2)ed by its writer, so a process
// enforcing the store's limits does not remove another one's open artifact.

// markWriting locks a new artifact for as long as f is open. A file system
// without flock leaves it unmarked; the limits then keep it while it is
// written (see removeIdle).
func markWriting(f *os.File) {
	_ = flock.TryLock(f)
}

// removeIdle removes path, stat'ed as fi, when it takes its lock, which
// proves no other process writes it; removed is false when it was left. It
// opens the file for writing, as NFS's fcntl locks need (a read-only open
// gets EBADF), without following a link or waiting on a fifo, and goes on
// only with the file it was shown. Whatever answers neither "locked" nor
// "free" (a file system without locks, EBADF, a file it may not open) says
// nothing about a writer, so the file is then removed only when idle:
// unwritten for unverifiedIdle.
func removeIdle(path string, fi fs.FileInfo, idle bool) (removed bool, err error) {
	const flags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	f, err := os.OpenFile(path, os.O_RDWR|flags, 0)
	if errors.Is(err, fs.ErrPermission) {
		// A file made read-only: its lock is still to be had on a local
		// file system, where a read-only open can take it.
		f, err = os.OpenFile(path, os.O_RDONLY|flags, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err == nil {
		defer f.Close()
		if open, serr := f.Stat(); serr != nil || changed(open, fi) {
			return false, nil // replaced since it was stat'ed
		}
		err = tryLock(f)
	}
	switch {
	case errors.Is(err, flock.ErrLocked):
		return false, nil
	case err != nil && !idle:
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}

// tryLock is flock.TryLock; tests make it fail as NFS does.
var tryLock = flock.TryLock
