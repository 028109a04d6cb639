//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/internal/flock"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// ensureDir creates dir with mode 0700, or checks the one there: a real
// directory (not a symlink), owned by this user, that nobody else may
// enter. One of ours that is too open is tightened; one of another user's
// is refused, and so is one holding an entry not the user's (put there
// while it was open to others: the user removes it).
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &UnsafeError{Path: dir, Reason: "is not a directory (a symlink?)"}
	}
	if uid, _ := trustdir.Owner(fi); uid != os.Getuid() {
		return &UnsafeError{Path: dir, Reason: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", uid, os.Getuid())}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("cannot make %s private: %w", dir, err)
		}
	}
	// Others could write it once (it was open, or made before this
	// check): what they put there (a link where the log goes, a lock they
	// hold) must not be used, now or after the tightening.
	return foreignEntry(dir)
}

// foreignEntry refuses the first entry of dir that is not the user's.
func foreignEntry(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // gone since
		}
		if uid := owner(fi); uid != os.Getuid() {
			path := filepath.Join(dir, e.Name())
			return &UnsafeError{Path: path, Reason: fmt.Sprintf("belongs to uid %d, not to you (uid %d): another user put it there while the directory was open", uid, os.Getuid())}
		}
	}
	return nil
}

// checkSocket checks the socket file before a client connects: a socket,
// owned by this user, mode 0600. It returns fs.ErrNotExist when none is
// there.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return &UnsafeError{Path: path, Reason: "is not a socket"}
	}
	if uid, _ := trustdir.Owner(fi); uid != os.Getuid() {
		return &UnsafeError{Path: path, Reason: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", uid, os.Getuid())}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return &UnsafeError{Path: path, Reason: fmt.Sprintf("has mode %o; others could connect", fi.Mode().Perm())}
	}
	return nil
}

// removeStale removes a socket no process listens on, if it is ours.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().Type() != fs.ModeSocket:
		return &UnsafeError{Path: path, Reason: "is not a socket"}
	case owner(fi) != os.Getuid():
		return &UnsafeError{Path: path, Reason: fmt.Sprintf("belongs to uid %d, not to you (uid %d)", owner(fi), os.Getuid())}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove the stale socket %s: %w", path, err)
	}
	return nil
}

// owner is fi's uid, -1 when unknown (never this user's).
func owner(fi os.FileInfo) int {
	uid, _ := trustdir.Owner(fi)
	return uid
}

// lockFile opens path and takes an exclusive flock on it; with wait false
// it fails at once with errLocked when another holds it. Closing the file
// releases the lock, as does the holder's death. It opens for writing,
// which NFS's fcntl locks need, and never through a link: the directory is
// private (ensureDir), but a link planted before it was would otherwise
// have the lock taken, and the file created, wherever it points.
func lockFile(path string, wait bool) (*os.File, error) {
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &UnsafeError{Path: path, Reason: "is a symbolic link, not a lock file evalhost made"}
		}
		return nil, err
	}
	lock := flock.Lock
	if !wait {
		lock = flock.TryLock
	}
	// A file system without locks is an error too, unlike for the runner
	// cache: the lock is what says that no other background process serves
	// this home, or that a dead one's files may be reclaimed.
	if err := lock(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrLocked) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return f, nil
}

// awaitLock waits up to within for the lock at path to be free (a process
// that holds it for its life is ending), returning it held. No event says
// when another process releases a flock, so it tries every few
// milliseconds.
func awaitLock(path string, within time.Duration) (*os.File, error) {
	deadline := time.Now().Add(within)
	for {
		f, err := lockFile(path, false)
		if !errors.Is(err, errLocked) {
			return f, err
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
