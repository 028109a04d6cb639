package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// fakeVenv makes root/bin/python, a link to the real interpreter: enough
// for resolution to take root as a venv.
func fakeVenv(t *testing.T, root string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.Python(t), filepath.Join(root, "bin", "python")); err != nil {
		t.Fatal(err)
	}
}

// keyFixture is a registry with its own home, resolving requests in cwd.
type keyFixture struct {
	t    *testing.T
	r    *Registry
	home string
}

// newKeyFixture's registry watches from its first resolution, as one does
// once a key was used twice (TestKeyWatchStartsAtSecondUse).
func newKeyFixture(t *testing.T) *keyFixture {
	home := t.TempDir()
	f := &keyFixture{t: t, home: home, r: newTestRegistry(t, Config{Home: home, Getenv: func(string) string { return "" }})}
	f.r.keys.want = true
	return f
}

// watchInfo is the kernel's account of the registry's inotify watches
// (/proc/self/fdinfo), failing when it watches nothing.
func (f *keyFixture) watchInfo() []byte {
	f.t.Helper()
	f.r.keys.mu.Lock()
	fd := f.r.keys.w.ifd
	f.r.keys.mu.Unlock()
	if fd < 0 {
		f.t.Fatal("not watched")
	}
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// A registry that resolves once (a one-shot run) makes no inotify
// instance; a key used a second time is watched from then on; after a
// change a key is watched again once used unchanged; a reset keeps the
// instance (closing it would wait for the kernel).
func TestKeyWatchStartsAtSecondUse(t *testing.T) {
	home := t.TempDir()
	r := newTestRegistry(t, Config{Home: home, Getenv: func(string) string { return "" }})
	dir := t.TempDir()
	req := &Request{Cwd: dir, Cells: []Cell{py("1")}}
	entry := func() keyOut {
		r.keys.mu.Lock()
		defer r.keys.mu.Unlock()
		return r.keys.m[r.keyInput(dir, "")]
	}
	if _, _, _, err := r.resolveKey(req, dir); err != nil {
		t.Fatal(err)
	}
	if r.keys.w.opened || entry().watched {
		t.Fatalf("one resolution opened the watch (%v) or watched its entry (%v)", r.keys.w.opened, entry().watched)
	}
	if _, _, _, err := r.resolveKey(req, dir); err != nil {
		t.Fatal(err)
	}
	if !entry().watched {
		t.Fatal("the entry used a second time is not watched")
	}
	ifd := r.keys.w.ifd
	fakeVenv(t, filepath.Join(dir, ".venv"))
	_, _, py, err := r.resolveKey(req, dir)
	if err != nil {
		t.Fatal(err)
	}
	if py.Source != ".venv" {
		t.Fatalf("after making .venv: source %q, want .venv", py.Source)
	}
	if entry().watched {
		t.Error("the entry resolved after a change is watched at once; cells writing into the cwd would set watches up every time")
	}
	if _, _, _, err := r.resolveKey(req, dir); err != nil {
		t.Fatal(err)
	}
	if !entry().watched {
		t.Error("the entry used again unchanged after a change is not watched")
	}
	if r.keys.w.ifd != ifd || ifd < 0 {
		t.Errorf("the change reopened the inotify instance: fd %d, then %d", ifd, r.keys.w.ifd)
	}
}

// source resolves cwd and says where its interpreter came from.
func (f *keyFixture) source(cwd string) string {
	f.t.Helper()
	_, _, py, err := f.r.resolveKey(&Request{Cwd: cwd, Cells: []Cell{py("1")}}, cwd)
	if err != nil {
		f.t.Fatalf("resolveKey(%s): %v", cwd, err)
	}
	return py.Source
}

// holds says whether cwd's entry holds, failing when it is not watched:
// these tests are about the watch, not the stats behind it.
func (f *keyFixture) holds(cwd string) bool {
	f.t.Helper()
	in := f.r.keyInput(cwd, "")
	f.r.keys.mu.Lock()
	e, ok := f.r.keys.m[in]
	f.r.keys.mu.Unlock()
	if !ok || !e.watched {
		f.t.Fatalf("%s: no watched entry (%v)", cwd, ok)
	}
	_, ok = f.r.keys.get(in, f.home)
	return ok
}

// A .venv made in the cwd is seen by the watch on the cwd.
func TestKeyWatchNewVenv(t *testing.T) {
	f := newKeyFixture(t)
	dir := t.TempDir()
	first := f.source(dir)
	if !f.holds(dir) {
		t.Fatal("an unchanged cwd's entry does not hold")
	}
	fakeVenv(t, filepath.Join(dir, ".venv"))
	if f.holds(dir) {
		t.Fatal("the entry holds after a .venv was made in the cwd")
	}
	if got := f.source(dir); got != ".venv" {
		t.Fatalf("after making .venv: source %q, want .venv (first was %q)", got, first)
	}
}

// The home's managed venv appearing is seen; other entries of the home
// (what evalhost itself writes there) do not drop the entry.
func TestKeyWatchManagedVenv(t *testing.T) {
	f := newKeyFixture(t)
	dir := t.TempDir()
	f.source(dir)
	if err := os.MkdirAll(filepath.Join(f.home, "artifacts", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !f.holds(dir) {
		t.Fatal("a new directory in the home beside python-env dropped the entry")
	}
	fakeVenv(t, filepath.Join(f.home, managedVenv))
	if got := f.source(dir); got != "managed venv" {
		t.Fatalf("after making the managed venv: source %q", got)
	}
}

// A parent of the cwd moved away and made again, holding a cwd of the same
// name with a .venv, is seen by the watch on the parent's parent; another
// entry made there is not a change.
func TestKeyWatchParentReplaced(t *testing.T) {
	f := newKeyFixture(t)
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.source(dir)
	if err := os.Mkdir(filepath.Join(base, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !f.holds(dir) {
		t.Fatal("a sibling of a parent dropped the entry")
	}
	if err := os.Rename(filepath.Join(base, "a"), filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	fakeVenv(t, filepath.Join(dir, ".venv"))
	if got := f.source(dir); got != ".venv" {
		t.Fatalf("after replacing a parent: source %q, want the new cwd's .venv", got)
	}
}

// A symbolic link on the way to the cwd pointed elsewhere is seen, and so
// is a change behind the link's target.
func TestKeyWatchSymlinkRepointed(t *testing.T) {
	f := newKeyFixture(t)
	base := t.TempDir()
	for _, d := range []string{"one/b", "two/b"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fakeVenv(t, filepath.Join(base, "two", "b", ".venv"))
	link := filepath.Join(base, "link")
	if err := os.Symlink("one", link); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(link, "b")
	if got := f.source(dir); got == ".venv" {
		t.Fatal("resolved the other directory's .venv")
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("two", link); err != nil {
		t.Fatal(err)
	}
	if got := f.source(dir); got != ".venv" {
		t.Fatalf("after pointing the link at two: source %q, want two/b's .venv", got)
	}
	if err := os.Rename(filepath.Join(base, "two", "b"), filepath.Join(base, "two", "c")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "two", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.source(dir); got == ".venv" {
		t.Fatal("after replacing the cwd behind the link: still the old .venv")
	}
}

// A relative cwd's entry holds while the working directory is the one it
// was made in; a chdir elsewhere drops it.
func TestKeyWatchRelativeCwd(t *testing.T) {
	f := newKeyFixture(t)
	a, b := t.TempDir(), t.TempDir()
	fakeVenv(t, filepath.Join(b, ".venv"))
	t.Chdir(a)
	f.source(".")
	if !f.holds(".") {
		t.Fatal("an unchanged working directory's entry does not hold")
	}
	t.Chdir(b)
	if got := f.source("."); got != ".venv" {
		t.Fatalf("after chdir: source %q, want b's .venv", got)
	}
}

// A directory on the way to a symbolic link's target, which the link's own
// path does not go through, replaced is seen too.
func TestKeyWatchSymlinkTargetParent(t *testing.T) {
	f := newKeyFixture(t)
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "deep", "t", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(base, "deep", "t"), link); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(link, "b")
	f.source(dir)
	if err := os.Rename(filepath.Join(base, "deep"), filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	fakeVenv(t, filepath.Join(base, "deep", "t", "b", ".venv"))
	if got := f.source(dir); got != ".venv" {
		t.Fatalf("after replacing the target's parent: source %q, want the new target's .venv", got)
	}
}

// The watches are bounded with the entries: when the cache starts over,
// so do they, and many cwds that never change do not use up the user's
// inotify watches.
func TestKeyWatchBounded(t *testing.T) {
	f := newKeyFixture(t)
	root := t.TempDir()
	for i := range 3 * maxKeyCache {
		d := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f.source(d)
	}
	b := f.watchInfo()
	// A watch per cwd, and one per directory on the way to it or to the home.
	if n, most := bytes.Count(b, []byte("inotify wd:")), maxKeyCache+strings.Count(root+f.home, "/"); n > most {
		t.Fatalf("%d inotify watches after %d cwds, want at most %d", n, 3*maxKeyCache, most)
	}
}

// No watch asks for events on a directory's children: with one in its
// mask the kernel marks every cached entry of the directory when the
// watch is added (57 ms for a /tmp that held many names), paid again at
// every re-watch. Read from the kernel's own account of the watches.
func TestKeyWatchAsksNoChildEvents(t *testing.T) {
	f := newKeyFixture(t)
	cwd := t.TempDir()
	f.source(cwd)
	b := f.watchInfo()
	// The kernel's FS_EVENTS_POSS_ON_CHILD, as inotify's bits.
	const onChild = syscall.IN_ACCESS | syscall.IN_MODIFY | syscall.IN_ATTRIB |
		syscall.IN_CLOSE_WRITE | syscall.IN_CLOSE_NOWRITE | syscall.IN_OPEN
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "inotify wd:") {
			continue
		}
		n++
		_, rest, _ := strings.Cut(line, " mask:")
		hex, _, _ := strings.Cut(rest, " ")
		mask, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			t.Fatalf("fdinfo line %q: %v", line, err)
		}
		if mask&onChild != 0 {
			t.Errorf("watch %q asks for events on children (%#x)", line, mask&onChild)
		}
	}
	if n == 0 {
		t.Fatalf("no watches in fdinfo:\n%s", b)
	}
}

// Files made, renamed and removed in the cwd (an agent editing its
// project between cells) leave the entry as it was: resolution reads only
// .venv, venv and the version files there. Those dropping it is
// TestKeyWatchNewVenv's and, for a version file, this one's end.
func TestKeyWatchCwdFilesKeepTheEntry(t *testing.T) {
	f := newKeyFixture(t)
	dir := t.TempDir()
	f.source(dir)
	edit := filepath.Join(dir, "main.py")
	for i, step := range []func() error{
		func() error { return os.WriteFile(edit+".tmp", []byte("x = 1\n"), 0o644) },
		func() error { return os.Rename(edit+".tmp", edit) },
		func() error { return os.Mkdir(filepath.Join(dir, "build"), 0o755) },
		func() error { return os.Remove(edit) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		if !f.holds(dir) {
			t.Fatalf("step %d of an edit in the cwd dropped the entry", i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".python-version"), []byte("3.11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f.holds(dir) {
		t.Error("the entry holds after a .python-version was made in the cwd")
	}
}
