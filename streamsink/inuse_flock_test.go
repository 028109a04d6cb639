//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package streamsink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/flock"
)

// nfsTryLock is flock.TryLock as Linux gives it on NFS, where flock is an
// fcntl write lock: a file open only for reading cannot be locked. No test
// can mount NFS, so the errno is injected; the exclusion between two open
// files is the local file system's real flock.
func nfsTryLock(f *os.File) error {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err == nil && fl&unix.O_ACCMODE == unix.O_RDONLY {
		return os.NewSyscallError("flock", syscall.EBADF)
	}
	return flock.TryLock(f)
}

// TestLimitsKeepWhatTheyCannotLock: the limits remove an artifact only
// when they took its lock. One whose lock they could not test (NFS, where
// a lock error is not "locked") stays until it has gone unwritten for
// unverifiedIdle, so the store cannot grow without bound; one that another
// Store of this process writes stays whatever the lock says, since NFS's
// locks are the process's and so never exclude the process's own opens.
func TestLimitsKeepWhatTheyCannotLock(t *testing.T) {
	errnoLock := func(errno syscall.Errno) func(*os.File) error {
		return func(*os.File) error { return os.NewSyscallError("flock", errno) }
	}
	noLocks := func(*os.File) error {
		return fmt.Errorf("flock: %w (%w)", syscall.ENOLCK, flock.ErrUnsupported)
	}
	always := func(*os.File) error { return nil } // NFS, within one process
	long := time.Now().Add(-2 * unverifiedIdle)
	recent := time.Now().Add(-time.Hour)
	tests := []struct {
		name     string
		tryLock  func(*os.File) error
		mod      time.Time
		heldBy   string // "process": another open file holds its flock; "store": another Store of this process writes it
		wantKept bool
	}{
		{"held by another process, on NFS", nfsTryLock, recent, "process", true},
		{"held by another process, on NFS, long idle", nfsTryLock, long, "process", true},
		{"free, on NFS", nfsTryLock, recent, "", false},
		{"a lock error that is not locked (EBADF)", errnoLock(syscall.EBADF), recent, "", true},
		{"no locks on the file system (ENOLCK)", noLocks, recent, "", true},
		{"a lock error, unwritten for long", errnoLock(syscall.EBADF), long, "", false},
		{"no locks, unwritten for long", noLocks, long, "", false},
		{"written by another Store of this process", always, recent, "store", true},
		{"written by another Store of this process, long idle", always, long, "store", true},
		{"free", flock.TryLock, recent, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var target string
			switch tt.heldBy {
			case "store":
				other := NewStore(dir)
				f, id, err := other.Create("eval.log")
				if err != nil {
					t.Fatal(err)
				}
				defer other.Finish(id)
				defer f.Close()
				target = f.Name()
			default:
				target = filepath.Join(dir, "1.eval.log")
				if err := os.WriteFile(target, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if tt.heldBy == "process" {
					f, err := os.OpenFile(target, os.O_RDWR, 0)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					if err := flock.TryLock(f); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "99.eval.log"), nil, 0o600); err != nil {
				t.Fatal(err) // the newest, which stays
			}
			if err := os.Truncate(target, 1000); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(target, tt.mod, tt.mod); err != nil {
				t.Fatal(err)
			}
			tryLock = tt.tryLock
			t.Cleanup(func() { tryLock = flock.TryLock })
			st := NewStore(dir)
			if _, err := st.limit(time.Minute, 100); err != nil {
				t.Fatal(err)
			}
			kept := slices.Contains(listDir(t, dir), filepath.Base(target))
			if kept != tt.wantKept {
				t.Errorf("the artifact kept: %v, want %v", kept, tt.wantKept)
			}
		})
	}
}
