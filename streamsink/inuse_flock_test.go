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

// TestLimitsLeaveAReusedName: the limits act on a listing that may be stale
// by the time they reach a file. When its name was removed (by another
// Store's limits) and taken again by a new artifact being written, the new
// file is left: not judged idle by the old file's age, nor removed because
// a lock within this process is always had on NFS.
func TestLimitsLeaveAReusedName(t *testing.T) {
	noLocks := func(*os.File) error {
		return fmt.Errorf("flock: %w (%w)", syscall.ENOLCK, flock.ErrUnsupported)
	}
	always := func(*os.File) error { return nil } // NFS, within one process
	tests := []struct {
		name    string
		tryLock func(*os.File) error
		byStore bool // the new file is written by a Store of this process
	}{
		{"written by another process, no locks", noLocks, false},
		{"written by a Store of this process, on NFS", always, true},
		{"written by a Store of this process, no locks", noLocks, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "1.eval.log")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			long := time.Now().Add(-2 * unverifiedIdle)
			if err := os.Chtimes(path, long, long); err != nil {
				t.Fatal(err)
			}
			listed, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			// Moved away, not removed, so that the new file cannot get
			// its inode, as it may on a file system that reuses them.
			if err := os.Rename(path, filepath.Join(t.TempDir(), "gone")); err != nil {
				t.Fatal(err)
			}
			if tt.byStore {
				st := NewStore(dir)
				st.next = 1 // scanned before the name was freed
				if err := prepareDir(dir, false); err != nil {
					t.Fatal(err)
				}
				f, id, err := st.Create("eval.log")
				if err != nil {
					t.Fatal(err)
				}
				defer st.Finish(id)
				defer f.Close()
				if f.Name() != path {
					t.Fatalf("created %s, want %s", f.Name(), path)
				}
			} else if err := os.WriteFile(path, []byte("new"), 0o600); err != nil {
				t.Fatal(err)
			}
			tryLock = tt.tryLock
			t.Cleanup(func() { tryLock = flock.TryLock })
			removed, err := removeUnused(path, listed, time.Now())
			if _, serr := os.Lstat(path); removed || serr != nil {
				t.Errorf("the new file at a listed name: removed %v (%v), stat %v; want it kept", removed, err, serr)
			}
		})
	}
}

// TestLimitsRemoveAReadOnlyArtifact: an artifact made read-only, which the
// limits cannot open for writing, is still removed where its lock can be
// had by a read-only open, as before they opened for writing.
func TestLimitsRemoveAReadOnlyArtifact(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens a read-only file for writing")
	}
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"1.eval.log": 0o400, "99.eval.log": 0o600} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewStore(dir).limit(time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"99.eval.log"}) {
		t.Errorf("left %q, want only the newest", got)
	}
}
