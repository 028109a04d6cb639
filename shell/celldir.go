package shell

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// Each shell keeps its cell files in a directory of its own in the
// temporary directory, which it removes as it ends. A killed evalhost
// (SIGKILL: its reaper still ends bash) cannot, so each live shell holds a
// lock on its directory (flock of the directory itself, through a
// descriptor no child inherits) for as long as it lives, and says so by a
// mark in it, made once it has the lock: a directory whose lock can be had
// has no live owner. SweepCellDirs removes those.

// cellDirPrefix names a cell directory: os.MkdirTemp's random digits follow.
const cellDirPrefix = "evalhost-sh-"

// ownerMark, in a cell directory, says its owner locked it: without the
// mark (an older evalhost's directory, or one being made) nothing tells
// whether its owner lives, and it is left alone.
const ownerMark = ".locked"

// cellDir is a shell's directory and the lock its life holds.
type cellDir struct {
	path string
	lock *os.File // the directory, locked; nil where no lock is to be had (then unmarked)
}

// makeCellDir makes a shell's cell directory (mode 0700), locked and
// marked where the file system has locks.
func makeCellDir() (*cellDir, error) {
	path, err := os.MkdirTemp("", cellDirPrefix)
	if err != nil {
		return nil, err
	}
	d := &cellDir{path: path}
	f, err := openDir(path)
	if err != nil {
		return d, nil // removed by its remove, as before there were locks
	}
	if flock.TryLock(f) == nil {
		mark, err := os.OpenFile(filepath.Join(path, ownerMark), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			mark.Close()
			d.lock = f
			return d, nil
		}
	}
	f.Close()
	return d, nil
}

// remove removes the directory, then lets its lock go.
func (d *cellDir) remove() error {
	err := os.RemoveAll(d.path)
	if d.lock != nil {
		d.lock.Close()
	}
	return err
}

// openDir opens path if it is a directory, not through a link at its end,
// without waiting (another user's FIFO under the name would hold an open
// for reading; O_DIRECTORY refuses it, O_NONBLOCK makes sure).
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

var sweepOnce sync.Once

// SweepCellDirsOnce is SweepCellDirs the first time a process calls it:
// Start, before its first shell, and serve, mcp and the background process
// as they start. A call while it runs waits for it; later ones do nothing.
func SweepCellDirsOnce() { sweepOnce.Do(func() { _, _ = SweepCellDirs() }) }

// SweepCellDirs removes from the temporary directory the cell directories
// shells of this user's left when their evalhost was killed: only a
// directory (never a link) named as a cell directory is, owned by the
// effective uid, of mode 0700, holding the owner's mark, whose lock can be
// had (its owner is gone: a live one holds it, this process's own shells'
// too). Nothing is swept from a temporary directory in which another user
// could rename entries (package trustdir's WriteDir), nor where there are
// no locks. removed counts the directories removed; err is the first
// removal that failed, or why the temporary directory was not swept.
func SweepCellDirs() (removed int, err error) {
	base, err := trustdir.WriteDir(os.TempDir())
	if err != nil {
		return 0, err
	}
	d, err := os.Open(base.Real)
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, name := range names {
		if !cellDirName(name) {
			continue
		}
		ok, err := sweepCellDir(filepath.Join(base.Real, name))
		if ok {
			removed++
		}
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// cellDirName says whether name is as os.MkdirTemp names a cell directory.
func cellDirName(name string) bool {
	digits, ok := strings.CutPrefix(name, cellDirPrefix)
	return ok && digits != "" && len(digits) <= 10 && strings.Trim(digits, "0123456789") == ""
}

// sweepCellDir removes path when it is a cell directory whose owner is
// gone. What the name is is judged before it is opened (another user's
// FIFO under the name would hold an open for reading), and again on the
// directory opened, without following a link or waiting: the same one.
func sweepCellDir(path string) (bool, error) {
	named, err := os.Lstat(path)
	if err != nil || !ownDir(named) {
		return false, nil
	}
	f, err := openDir(path)
	if err != nil {
		return false, nil
	}
	defer f.Close() // after the removal: the lock is held until the directory is gone
	fi, err := f.Stat()
	if err != nil || !ownDir(fi) || !os.SameFile(named, fi) {
		return false, nil
	}
	mark, err := os.Lstat(filepath.Join(path, ownerMark))
	if err != nil || !mark.Mode().IsRegular() {
		return false, nil
	}
	if flock.TryLock(f) != nil {
		return false, nil // its owner lives (or no locks here)
	}
	if err := os.RemoveAll(path); err != nil {
		return false, err
	}
	return true, nil
}

// ownDir says whether fi is a directory of mode 0700 (no special bits)
// owned by the effective uid, as makeCellDir makes them.
func ownDir(fi fs.FileInfo) bool {
	uid, ok := trustdir.Owner(fi)
	return fi.IsDir() && fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == 0o700 && ok && uid == os.Geteuid()
}
