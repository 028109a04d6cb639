//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
)

// sweepTemps removes the temp files of the notebook target that writers
// killed mid-save left. Its caller holds target's Lock. Only a regular
// file of this user's is removed, never through a symbolic link, and not
// one whose flock is held: a Go program that saves without the Lock is
// still writing it.
func sweepTemps(target string) {
	dir, base := splitTarget(target)
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range tempsOf(names, base) {
		removeLeftover(filepath.Join(dir, name))
	}
}

// removeLeftover removes path if it is a regular file of this user's that
// no writer holds.
func removeLeftover(path string) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || !mine(fi) {
		return
	}
	// O_NOFOLLOW and O_NONBLOCK: what was swapped in since the Lstat (a
	// link, a fifo) is neither followed nor waited on.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if opened, err := f.Stat(); err != nil || !os.SameFile(fi, opened) {
		return
	}
	// Only a lock had proves no writer holds it. Any other error keeps the
	// file: on NFS, whose flock is an fcntl lock, a lock needs the file open
	// for writing and this read-only open gets EBADF, whatever the writer
	// holds.
	if tryLock(f) != nil {
		return
	}
	if now, err := os.Lstat(path); err == nil && os.SameFile(fi, now) {
		os.Remove(path)
	}
}

// tryLock is flock.TryLock; tests make it fail as NFS does.
var tryLock = flock.TryLock

// mine reports whether fi belongs to this user.
func mine(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// markWriting flocks a new temp file for as long as it is open, so that
// sweepTemps leaves it while its writer lives even when that writer does
// not hold the notebook's Lock. It is false when a sweep took the file in
// the instant between its creation and its flock (it removed it, or holds
// its flock to do so): the writer makes another. Without flock the file
// is unmarked, and true: the sweep keeps what it cannot flock.
func markWriting(f *os.File) bool {
	if beforeMark != nil {
		beforeMark(f.Name())
	}
	switch err := flock.TryLock(f); {
	case errors.Is(err, flock.ErrLocked):
		return false
	case err != nil:
		return true
	}
	made, err1 := f.Stat()
	now, err2 := os.Lstat(f.Name())
	return err1 == nil && err2 == nil && os.SameFile(made, now)
}

// beforeMark, when set (by a test), is called with a new temp file just
// before markWriting flocks it: a sweep may come then.
var beforeMark func(name string)

// holdMark keeps f's mark past f.Close until release is called: a dup
// shares f's open file description, and with it the flock, so that the
// temp file is not swept between its writer's Close and its rename.
func holdMark(f *os.File) (release func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return func() {}
	}
	var dup *os.File
	rc.Control(func(fd uintptr) {
		// As os does for descriptors made without O_CLOEXEC: a fork in
		// between would leak it into the child, lock and all.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if nfd, err := syscall.Dup(int(fd)); err == nil {
			syscall.CloseOnExec(nfd)
			dup = os.NewFile(uintptr(nfd), f.Name())
		}
	})
	return func() {
		if dup != nil {
			dup.Close()
		}
	}
}
