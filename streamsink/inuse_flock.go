//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package streamsink

import (
	"errors"
	"os"
	"syscall"

	"github.com/evalhost/evalhost/internal/flock"
)

// An artifact being written is flock(2)ed by its writer, so a process
// enforcing the store's limits does not remove another one's open artifact.

// markWriting locks a new artifact for as long as f is open. A file system
// without flock leaves it unmarked, which only loses that protection.
func markWriting(f *os.File) {
	_ = flock.TryLock(f)
}

// removeIdle removes path unless a writer holds its lock; removed is false
// when it was left.
func removeIdle(path string) (removed bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	// Only a writer's lock keeps the file: where there are no locks it
	// is removed, as where there is no flock at all.
	if errors.Is(flock.TryLock(f), flock.ErrLocked) {
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}
