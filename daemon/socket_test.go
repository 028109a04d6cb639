package daemon

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A client that dials while a starting process has bound its socket but
// not yet made it private is told none runs (so it waits on the start
// lock), not that the socket is open to others: two commands racing to
// start one both got it before the socket appeared under its name only
// once of mode 0600.
func TestSocketAppearsPrivate(t *testing.T) {
	for _, tc := range []struct {
		name string
		home func(t *testing.T) string
	}{
		{"short home", func(t *testing.T) string { return t.TempDir() }},
		{"long home", func(t *testing.T) string { return filepath.Join(t.TempDir(), strings.Repeat("h", 120)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := tc.home(t)
			paths := PathsFor(home)
			leaveStale(t, paths.Bind) // a start killed between its bind and its rename
			var dialed error
			afterBind = func() {
				_, dialed = Dial(paths)
				if fi, err := os.Lstat(paths.Socket); err == nil && fi.Mode().Perm() != 0o600 {
					t.Errorf("the socket is at its name with mode %o before it is private", fi.Mode().Perm())
				}
			}
			t.Cleanup(func() { afterBind = func() {} })
			serveAt(t, home, time.Hour)
			if !errors.Is(dialed, ErrNotRunning) {
				t.Fatalf("Dial between the bind and the chmod: %v, want ErrNotRunning", dialed)
			}
			if got := eval(t, paths, "s", "echo hi"); got != "hi\n" {
				t.Fatalf("eval once ready: %q", got)
			}
		})
	}
}

// leaveStale leaves a socket at path that no process listens on.
func leaveStale(t *testing.T, path string) {
	t.Helper()
	if err := ensureDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	addr, release, err := socketAddr(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

// A process whose home was moved away while it ran (mv ~/.evalhost ...)
// leaves alone, at its end, the socket that a newer process made at the
// old name: removing it would leave that one running unreachable, holding
// its lock, so every command would wait and then say to kill it.
func TestEndSparesAnotherProcessSocket(t *testing.T) {
	for _, tc := range []struct {
		name string
		home string
	}{
		{"short home", "home"},
		{"long home", strings.Repeat("h", 120)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), tc.home)
			_, waitOld := serveAt(t, home, time.Hour)
			moved := home + ".old"
			if err := os.Rename(home, moved); err != nil {
				t.Fatal(err)
			}
			paths, _ := serveAt(t, home, time.Hour)
			eval(t, paths, "new", "true")
			// The older process records a session, and at its end
			// what that session lost, in its own (moved) directory.
			eval(t, PathsFor(moved), "old", "true")
			if _, err := Stop(PathsFor(moved)); err != nil {
				t.Fatal(err)
			}
			if err := waitOld(); err != nil {
				t.Fatal(err)
			}
			if st, ok := readState(paths.State); !ok || !slices.Contains(st.Sessions, "new") || slices.Contains(st.Sessions, "old") {
				t.Errorf("the newer process's state.json: %+v (present %v), want its own sessions only", st, ok)
			}
			if got := eval(t, paths, "s", "echo hi"); got != "hi\n" {
				t.Fatalf("eval in the newer process: %q", got)
			}
			if _, err := os.Lstat(paths.Lost); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the older process wrote its losses at the newer one's home: %v", err)
			}
			if lost := readLost(openRoot(t, PathsFor(moved).Dir), "lost.json"); len(lost) != 1 || lost[0].Key.Session != "old" {
				t.Errorf("the older process's losses in its own directory: %+v", lost)
			}
		})
	}
}

// A home moved between the lock's taking and the directory's opening
// leaves the process holding another directory's lock: it says so and
// stops, not writing into the newer home.
func TestSameLock(t *testing.T) {
	home := t.TempDir()
	paths := PathsFor(home)
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	lock, err := lockFile(paths.Lock, false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := sameLock(lock, openRoot(t, paths.Dir), "lock"); err != nil {
		t.Fatalf("the lock in its own directory: %v", err)
	}
	if err := os.Rename(home, home+".old"); err != nil {
		t.Fatal(err)
	}
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	if err := sameLock(lock, openRoot(t, paths.Dir), "lock"); err == nil || !strings.Contains(err.Error(), "moved or replaced") {
		t.Fatalf("the lock of a moved home: %v, want it refused", err)
	}
}

// A link planted where a lock file goes is refused, not followed: the lock
// is neither taken nor its file created where the link points.
func TestLockFileRefusesALink(t *testing.T) {
	for _, wait := range []bool{false, true} {
		t.Run(map[bool]string{false: "try", true: "wait"}[wait], func(t *testing.T) {
			paths := PathsFor(t.TempDir())
			if err := ensureDir(paths.Dir); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.Symlink(target, paths.Lock); err != nil {
				t.Fatal(err)
			}
			f, err := lockFile(paths.Lock, wait)
			if f != nil {
				f.Close()
			}
			var unsafe *UnsafeError
			if !errors.As(err, &unsafe) {
				t.Errorf("lockFile through a link: %v, want an UnsafeError", err)
			}
			if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the link's target was created: %v", err)
			}
		})
	}
}
