//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// special is a path that names no regular file, of one kind.
type special struct {
	name, path string
	kind       string // how the refusal calls it
	advice     string // what the refusal of a read says to do
	writeSafe  bool   // a save's refusal may be tested on it: a broken one writes nowhere that matters
}

// specialFiles makes one path of each kind that is no regular file, in a
// short directory (a Unix socket's name is bounded): a FIFO, whose open
// waits for a writer; a listening Unix socket; a character device (made
// with mknod where this user may, else a link to /dev/null); a directory.
func specialFiles(t *testing.T) []special {
	t.Helper()
	dir, err := os.MkdirTemp("", "nb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo.ipynb")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	sock := filepath.Join(dir, "sock.ipynb")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev, devSafe := filepath.Join(dir, "dev.ipynb"), true
	if syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3) != nil || !opens(dev) { // /dev/null's numbers on Linux
		os.Remove(dev)
		if err := os.Symlink("/dev/null", dev); err != nil {
			t.Fatal(err)
		}
		devSafe = false // a save that followed it would write in /dev
	}
	sub := filepath.Join(dir, "dir.ipynb")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return []special{
		{"a FIFO", fifo, "a named pipe (FIFO)", "save what it holds to a file and give that file's path", true},
		{"a socket", sock, "a socket", "it holds nothing to read; give a regular file's path", true},
		{"a character device", dev, "a character device", "copy what you need from it into a file and give that file's path", devSafe},
		{"a directory", sub, "a directory", "give the path of a .ipynb file in it", true},
	}
}

// opens says whether path opens to read (a device on a nodev mount does not).
func opens(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
	}
	return err == nil
}

// within runs f, failing the test if it has not returned within 20 s: a
// read that waits for a FIFO's writer never returns. The FIFO at path, if
// it is one, is then opened for writing so that the reader ends.
func within(t *testing.T, path string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("still reading %s after 20 s", path)
		return nil
	}
}

// TestReadRefusesWhatIsNoFile: every read of a notebook refuses at once
// a path that names no regular file, saying what it is and what to do: a
// FIFO's open waited for ever, a socket's open said "no such device or
// address", a device's "not a regular file (Dc---------)" and a
// directory's "is a directory" said nothing of what to do. A FIFO
// planted where the notebook goes held the caller's notebook lock with
// it, and no context could end that open.
func TestReadRefusesWhatIsNoFile(t *testing.T) {
	kinds := append(specialFiles(t), special{"a device that never ends", "/dev/zero", "a character device",
		"copy what you need from it into a file", false})
	for _, k := range kinds {
		for _, r := range []struct {
			name string
			read func(string) error
		}{
			{"Load", func(p string) error { _, err := Load(p); return err }},
			{"LoadOrNew", func(p string) error { _, err := LoadOrNew(p); return err }},
			{"ReadFile", func(p string) error { _, err := ReadFile(p); return err }},
		} {
			t.Run(k.name+"/"+r.name, func(t *testing.T) {
				err := within(t, k.path, func() error { return r.read(k.path) })
				var fe *FileError
				var nr *NotRegularError
				if !errors.As(err, &fe) || !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) {
					t.Fatalf("%v; want a *FileError of a *NotRegularError", err)
				}
				want := "cannot read " + trustdir.Shown(k.path) + ": it is " + k.kind + ", not a regular file"
				if k.kind == "a directory" {
					want = "cannot read " + trustdir.Shown(k.path) + ": it is a directory, not a notebook file"
				}
				if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, k.advice) {
					t.Errorf("%q\nwant it to start %q and say %q", msg, want, k.advice)
				}
			})
		}
	}
}

// TestSaveRefusesWhatIsNoFile: a save, and CheckWritable before one,
// refuse a target that is no regular file saying what it is (they said
// "not a regular file", whatever it was) and what to do.
func TestSaveRefusesWhatIsNoFile(t *testing.T) {
	for _, k := range specialFiles(t) {
		if !k.writeSafe {
			continue
		}
		want := map[bool]string{
			false: "write notebook " + trustdir.Shown(k.path) + ": it is " + k.kind + ", not a regular file, which a save does not replace: remove it, or give another path",
			true:  "write notebook " + trustdir.Shown(k.path) + ": it is a directory, not a notebook file; give a file's name in it (DIR/NAME.ipynb)",
		}[k.kind == "a directory"]
		for _, w := range []struct {
			name  string
			write func(string) error
		}{
			{"Save", func(p string) error { return New().Save(p) }},
			{"CheckWritable", CheckWritable},
		} {
			t.Run(k.name+"/"+w.name, func(t *testing.T) {
				err := within(t, k.path, func() error { return w.write(k.path) })
				if err == nil || err.Error() != want || !errors.Is(err, ErrNotRegular) {
					t.Errorf("%v\nwant %q, matching ErrNotRegular", err, want)
				}
				if st, lerr := os.Lstat(k.path); lerr != nil || st.Mode().IsRegular() {
					t.Errorf("the %s was replaced", k.kind)
				}
			})
		}
	}
}

// TestNewFileRefusalSaysWhatHoldsTheName: a new notebook's save (NewAt,
// LoadOrNew of a missing file), which takes its name only while nothing is
// there, says what it found there when that is not a file of the user's
// own: "was created by someone else" of a dangling symlink, which ls shows
// and cat calls missing, or of another user's file, said nothing a reader
// could act on.
func TestNewFileRefusalSaysWhatHoldsTheName(t *testing.T) {
	dir := t.TempDir()
	theirs := []byte(`{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
	for _, tc := range []struct {
		name string
		// plant puts something at path; early: before the save looks,
		// else between its check and its rename.
		plant func(t *testing.T, path string)
		early bool
		root  bool // only root can give a file to another user
		want  []string
	}{
		{name: "a file of the user's own", plant: func(t *testing.T, p string) { os.WriteFile(p, theirs, 0o644) },
			want: []string{" was created by someone else after evalhost found it missing; nothing was written"}},
		{name: "a dangling symlink", plant: func(t *testing.T, p string) { os.Symlink("gone\x1b[2J.ipynb", p) },
			want: []string{" is a symlink to " + trustdir.Shown("gone\x1b[2J.ipynb") + ", which does not exist, made after evalhost found the name free; nothing was written: remove the link, or save under another name"}},
		{name: "a FIFO", plant: func(t *testing.T, p string) { syscall.Mkfifo(p, 0o644) },
			want: []string{" is a named pipe (FIFO), made after evalhost found the name free; nothing was written: remove it, or save under another name"}},
		{name: "another user's file", root: true, plant: giveAway(theirs),
			want: []string{" is a file of another user's, ", "(uid 65534), made after evalhost found the name free; nothing was written: save under another name"}},
		{name: "another user's file, there before the save", root: true, early: true, plant: giveAway(theirs),
			want: []string{" is a file of another user's, ", "(uid 65534), made after evalhost found the name free"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("only root gives a file to another user")
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".ipynb")
			nb := NewAt(path)
			if tc.early {
				tc.plant(t, path)
			} else {
				beforePublish = func(string) { tc.plant(t, path) }
				t.Cleanup(func() { beforePublish = nil })
			}
			err := within(t, path, func() error { return nb.Save(path) })
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("%v; want a *ConflictError", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, trustdir.Shown(path)+" ") {
				t.Errorf("%q does not start with the name", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q\nwant %q", err, w)
				}
			}
			if st, lerr := os.Lstat(path); lerr != nil || st.Mode().IsRegular() && st.Size() != int64(len(theirs)) {
				t.Errorf("what was planted was replaced: %v", lerr)
			}
		})
	}
}

// giveAway makes path a file of uid 65534's (nobody's).
func giveAway(data []byte) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Lchown(path, 65534, 65534); err != nil {
			t.Error(err)
		}
	}
}

// TestOccupantOf: what holds a name is said as a message puts it after
// the name, and what the user may do about it.
func TestOccupantOf(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		make   func(t *testing.T, path string)
		root   bool // only root gives a file to another user
		what   string
		remedy string
		plain  bool
	}{
		{name: "a file of the user's own", make: func(t *testing.T, p string) { os.WriteFile(p, nil, 0o644) },
			what: "exists", remedy: "remove it", plain: true},
		{name: "a link to a file of the user's own", make: func(t *testing.T, p string) {
			os.WriteFile(p+".real", nil, 0o644)
			os.Symlink(filepath.Base(p)+".real", p)
		}, what: "exists", remedy: "remove the link", plain: true},
		{name: "a dangling symlink", make: func(t *testing.T, p string) { os.Symlink("../gone.ipynb", p) },
			what: "is a symlink to ../gone.ipynb, which does not exist", remedy: "remove the link"},
		{name: "a symlink loop", make: func(t *testing.T, p string) { os.Symlink(filepath.Base(p), p) },
			what: "is a symlink to a_symlink_loop, a loop of links that leads to no file", remedy: "remove the link"},
		{name: "a link to a FIFO", make: func(t *testing.T, p string) {
			syscall.Mkfifo(p+".fifo", 0o644)
			os.Symlink(filepath.Base(p)+".fifo", p)
		}, what: "is a symlink to a_link_to_a_FIFO.fifo, a named pipe (FIFO)", remedy: "remove the link"},
		{name: "a directory", make: func(t *testing.T, p string) { os.Mkdir(p, 0o755) },
			what: "is a directory", remedy: "remove it"},
		{name: "another user's file", root: true, make: giveAway(nil),
			what: "is a file of another user's, ", remedy: ""},
		{name: "a link to another user's file", root: true, make: func(t *testing.T, p string) {
			giveAway(nil)(t, p+".theirs")
			os.Symlink(filepath.Base(p)+".theirs", p)
		}, what: "is a symlink to a_link_to_another_user's_file.theirs, a file of another user's, ", remedy: ""},
		{name: "another user's dangling link", root: true, make: func(t *testing.T, p string) {
			os.Symlink("gone", p)
			os.Lchown(p, 65534, 65534)
		}, what: "is a symlink of another user's, ", remedy: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("only root gives a file to another user")
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			tc.make(t, path)
			o, ok := OccupantOf(path)
			if !ok {
				t.Fatal("nothing found there")
			}
			if got := o.What(); !strings.HasPrefix(got, tc.what) || tc.root && !strings.Contains(got, "(uid 65534)") {
				t.Errorf("What() = %q, want it to start %q", got, tc.what)
			}
			if o.Remedy() != tc.remedy || o.Plain() != tc.plain {
				t.Errorf("Remedy() = %q, Plain() = %v; want %q, %v", o.Remedy(), o.Plain(), tc.remedy, tc.plain)
			}
		})
	}
	if _, ok := OccupantOf(filepath.Join(dir, "nothing")); ok {
		t.Error("OccupantOf found something where nothing is")
	}
}

// TestLockRefusesWhatIsNoLockFile: what holds the lock file's name and is
// no regular file (planted in a shared directory, or a mistake) is not
// taken for the lock: a FIFO was opened, flocked and removed as if it were
// evalhost's, a socket said "no such device or address", a directory "is
// a directory". Each is ErrBadLockFile, saying what it is, and is left.
func TestLockRefusesWhatIsNoLockFile(t *testing.T) {
	for _, k := range specialFiles(t) {
		if !k.writeSafe {
			continue // a link to /dev/null: the symlink's own refusal
		}
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			lockFile := filepath.Join(dir, ".n.ipynb.evalhost-lock")
			if err := os.Rename(k.path, lockFile); err != nil {
				t.Fatal(err)
			}
			defer os.Rename(lockFile, k.path)
			err := within(t, lockFile, func() error {
				lk, err := Lock(context.Background(), filepath.Join(dir, "n.ipynb"))
				if err == nil {
					lk.Unlock()
				}
				return err
			})
			want := "lock notebook " + filepath.Join(dir, "n.ipynb") + ": not a lock file: " + lockFile + " is " + k.kind +
				", not a lock file evalhost made: remove it"
			if !errors.Is(err, ErrBadLockFile) || err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Lock = %v\nwant ErrBadLockFile starting %q", err, want)
			}
			if st, err := os.Lstat(lockFile); err != nil || st.Mode().IsRegular() {
				t.Errorf("the %s was taken: %v", k.kind, err)
			}
		})
	}
}

// TestOpenInputSaysWhatItOpened: OpenInput opens a regular file or a
// pipe, and says which from its own fstat, so that its caller (nb's
// readPiped, which refuses a pipe nothing wrote to) needs no stat of its
// own; what is neither is refused as OpenRegular refuses it.
func TestOpenInputSaysWhatItOpened(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "text"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	for _, tc := range []struct {
		name, path string
		pipe, ok   bool
	}{
		{"a regular file", file, false, true},
		{"a FIFO", fifo, true, true},
		{"a directory", dir, false, false},
		{"a device", "/dev/null", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, pipe, err := OpenInput(tc.path)
			if err == nil {
				f.Close()
			}
			if (err == nil) != tc.ok || pipe != tc.pipe {
				t.Errorf("OpenInput: pipe %v, %v; want pipe %v, opened %v", pipe, err, tc.pipe, tc.ok)
			}
			if !tc.ok && !errors.Is(err, ErrNotRegular) {
				t.Errorf("%v; want ErrNotRegular", err)
			}
		})
	}
}
