package notebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// FileLock is an exclusive lock on one notebook, held against every other
// evalhost process and goroutine that locks the same file (by any path
// spelling or symlink). It is advisory: editors that do not take it are
// caught by Save's check instead.
//
// The lock is a file beside the notebook, ".NAME.evalhost-lock" (mode
// 0600), removed by Unlock; a holder that dies releases it with its file
// descriptors, so a lock file left behind by a crash never blocks anyone.
// The first Lock of a notebook in a process removes what a save killed
// mid-write left beside it (its ".NAME.*.tmp" files: see sweep.go).
type FileLock struct {
	path   string // the lock file
	once   sync.Once
	err    error
	held   heldLock
	unlock func() // the in-process lock's (lock_local.go)
}

// ErrBadLockFile is wrapped by Lock's error when the lock file's place
// holds something evalhost did not make there: a symbolic link, or what
// is no regular file (a FIFO, a socket, a device, a directory).
var ErrBadLockFile = errors.New("not a lock file")

// LockedError is a Lock that gave up because another holder kept the lock
// until the context ended. It matches ErrLocked.
type LockedError struct {
	Path     string // the notebook
	LockFile string
	Err      error // the context's error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is being changed by another evalhost process, which holds its lock %s (%v); try again when it is done",
		trustdir.Shown(e.Path), trustdir.Shown(e.LockFile), e.Err)
}

func (e *LockedError) Unwrap() []error { return []error{ErrLocked, e.Err} }

// Lock takes the notebook's lock, waiting while another process or
// goroutine holds it, until ctx ends (a *LockedError). Within a process
// the Locks of one notebook exclude each other by themselves, whatever
// the file system: on NFS the flock, made an fcntl lock, would not. Take it before
// reading the notebook and release it after saving, so that edits of one
// notebook happen one after another and none is lost; a long job that
// saves now and then (nb run) takes it around each Save only. Locking a
// notebook this goroutine already holds waits for itself until ctx ends.
func Lock(ctx context.Context, path string) (*FileLock, error) {
	target, err := resolveLinks(path) // canonical's, a planted link refused
	if err != nil {
		return nil, fmt.Errorf("lock notebook %s: %w", trustdir.Shown(path), trustdir.ShownError(err))
	}
	if err := linkIntoNothing(path, target); err != nil {
		return nil, err // said as a write's: the lock file is no concern of the user's
	}
	dir, base := filepath.Split(target)
	l := &FileLock{path: filepath.Join(dir, "."+base+".evalhost-lock")}
	unlock, err := lockLocal(ctx, l.path)
	if err != nil {
		return nil, &LockedError{Path: path, LockFile: l.path, Err: err}
	}
	if err := l.lockFile(ctx, path, dir); err != nil {
		unlock()
		return nil, err
	}
	l.unlock = unlock
	sweepOnce(target)
	return l, nil
}

// lockFile takes the flock of the lock file, polling while another
// process holds it: no event says when another process lets go.
func (l *FileLock) lockFile(ctx context.Context, path, dir string) error {
	delay := time.Millisecond
	for {
		ok, err := l.held.try(l.path)
		if err != nil {
			return fmt.Errorf("lock notebook %s: %w%s", trustdir.Shown(path), trustdir.ShownError(err), lockHint(err, filepath.Clean(dir), l.path))
		}
		if ok {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return &LockedError{Path: path, LockFile: l.path, Err: ctx.Err()}
		case <-t.C:
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
}

// Unlock releases the lock and removes its file. It is safe to call twice;
// the second call returns the first one's result.
func (l *FileLock) Unlock() error {
	l.once.Do(func() {
		l.err = l.held.release(l.path)
		l.unlock()
	})
	return l.err
}

// lockHint says what a failure to create the lock file means for the
// notebook: the lock file is created beside it, as its new version is.
func lockHint(err error, dir, lockFile string) string {
	switch {
	case errors.Is(err, fs.ErrNotExist) && isDir(dir):
		// procfs and the like answer ENOENT to a create.
		return fmt.Sprintf("; the directory %s cannot hold files (a system directory?): give a path in another one", trustdir.Shown(dir))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("; the directory %s does not exist: create it first", trustdir.Shown(dir))
	case errors.Is(err, fs.ErrPermission) && fileExists(lockFile):
		return "; the lock file is there but not yours to open (another user's evalhost?): ask them, or remove it if no one edits the notebook"
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("; the directory %s is not writable by you, so the notebook cannot be written there either", trustdir.Shown(dir))
	}
	return ""
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
