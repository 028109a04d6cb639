//go:build unix

package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
)

// lockCache takes the lock of cacheDir's runner copies (flock of
// lockName), waiting while another start holds it. flock, not a pid: a
// start in another pid namespace (a container or sandbox sharing the
// home) or on another host (NFS, whose locks Linux makes fcntl locks)
// holds it too. locked is false where no lock is to be had (a read-only
// cache, a file system without locks): the caller then writes as before,
// its write saying why it fails, and removes nothing.
func lockCache(cacheDir string) (unlock func(), locked bool, err error) {
	path := filepath.Join(cacheDir, lockName)
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		var fi os.FileInfo
		if err == nil {
			fi, err = f.Stat()
			if err == nil && fi.Mode().IsRegular() && mine(fi) {
				return flockWait(f)
			}
			f.Close()
		} else if fi, err = os.Lstat(path); err == nil && fi.Mode().IsRegular() && mine(fi) {
			return func() {}, false, nil // ours, not to be opened (a read-only cache)
		}
		if err != nil {
			return func() {}, false, nil
		}
		// A link, or what another user put there while the dir was open
		// to them (it is not now: ownDir), could be held forever.
		if tries > 0 || os.Remove(path) != nil {
			return nil, false, fmt.Errorf("runner: lock %s: it is %v, not a file of yours: %w", path, fi.Mode(), ErrUnsafeCache)
		}
	}
}

// flockWait locks f, waiting; a file system without locks leaves it
// unlocked.
func flockWait(f *os.File) (func(), bool, error) {
	err := flock.Lock(f)
	switch {
	case err == nil:
		return func() { f.Close() }, true, nil
	case errors.Is(err, flock.ErrUnsupported):
		f.Close()
		return func() {}, false, nil
	}
	f.Close()
	return nil, false, fmt.Errorf("runner: lock %s: %w", f.Name(), err)
}

// mine reports whether fi is this user's.
func mine(fi os.FileInfo) bool {
	uid, me, ok := owner(fi)
	return !ok || uid == me
}
