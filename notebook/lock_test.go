package notebook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSaveRefusesAFileChangedSinceItWasRead: a save that would undo someone
// else's write is a *ConflictError saying so, and the file keeps that write.
func TestSaveRefusesAFileChangedSinceItWasRead(t *testing.T) {
	basic := readFile(t, "testdata/basic.ipynb")
	changed := func(p string) error { return os.WriteFile(p, append(bytes.Clone(basic), ' '), 0o644) }
	replaced := func(p string) error {
		tmp := p + ".other"
		if err := os.WriteFile(tmp, readFile(t, "testdata/empty.ipynb"), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	const replacedSays = "was replaced by another file after it was read (one renamed over it, as an editor's save, mv or git checkout does, or a symlink on its way repointed)"
	tests := []struct {
		name     string
		initial  []byte // nil: no file when it is read
		saved    bool   // saved once before meddle
		link     bool   // path is a symlink to the file, which meddle repoints
		meddle   func(path string) error
		want     string
		replaced bool // ConflictError.Replaced
	}{
		{"changed", basic, false, false, changed, "changed on disk after it was read (another edit or program wrote it)", false},
		{"changed after a save", basic, true, false, changed, "changed on disk after it was read", false},
		{"replaced by rename", basic, false, false, replaced, replacedSays, true},
		{"replaced by rename after a save", basic, true, false, replaced, replacedSays, true},
		{"a link repointed", basic, false, true, func(p string) error {
			other := filepath.Join(filepath.Dir(p), "other.ipynb")
			if err := os.WriteFile(other, readFile(t, "testdata/empty.ipynb"), 0o644); err != nil {
				return err
			}
			os.Remove(p)
			return os.Symlink("other.ipynb", p)
		}, replacedSays, true},
		{"created", nil, false, false, func(p string) error { return os.WriteFile(p, basic, 0o644) },
			"was created by someone else after evalhost found it missing", false},
		{"removed", basic, false, false, os.Remove, "was removed after it was read", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "n.ipynb")
			file := path
			if tt.link {
				file = filepath.Join(dir, "first.ipynb")
				if err := os.Symlink("first.ipynb", path); err != nil {
					t.Fatal(err)
				}
			}
			if tt.initial != nil {
				if err := os.WriteFile(file, tt.initial, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			nb, err := LoadOrNew(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := nb.Insert(0, Code, "mine"); err != nil {
				t.Fatal(err)
			}
			if tt.saved {
				if err := nb.Save(path); err != nil {
					t.Fatal(err)
				}
				if err := nb.Insert(0, Code, "mine again"); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.meddle(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			err = nb.Save(path)
			var conflict *ConflictError
			if !errors.Is(err, ErrConflict) || !errors.As(err, &conflict) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save = %v, want a *ConflictError saying %q", err, tt.want)
			}
			if conflict.Replaced != tt.replaced {
				t.Errorf("Replaced = %v, want %v", conflict.Replaced, tt.replaced)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Errorf("the other write was undone")
			}
			assertNoTempFiles(t, dir)
		})
	}
}

// TestSaveChecksAgainstItsOwnLastWrite: a notebook saved and saved again
// (nb run writes after every cell) is not a conflict with itself, whatever
// path spelling it is saved under, and a change between two saves is.
func TestSaveChecksAgainstItsOwnLastWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.ipynb")
	if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ipynb")
	if err := os.Symlink("n.ipynb", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	t.Chdir(dir)
	nb, err := Load("n.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{path, "n.ipynb", link, path} {
		nb.Edit(0, fmt.Sprint("save ", i))
		if err := nb.Save(p); err != nil {
			t.Fatalf("save %d to %s: %v", i, p, err)
		}
	}
	os.WriteFile(path, append(readFile(t, path), ' '), 0o644)
	nb.Edit(0, "after someone else's write")
	if err := nb.Save(link); !errors.Is(err, ErrConflict) {
		t.Errorf("Save after another write: %v, want ErrConflict", err)
	}
	// Another path is written unconditionally, and is the one checked next.
	other := filepath.Join(dir, "other.ipynb")
	os.WriteFile(other, []byte("not even JSON"), 0o644)
	if err := nb.Save(other); err != nil {
		t.Fatalf("save to another path: %v", err)
	}
	os.WriteFile(other, []byte("changed"), 0o644)
	if err := nb.Save(other); !errors.Is(err, ErrConflict) {
		t.Errorf("second save to the other path after a change: %v, want ErrConflict", err)
	}
}

func TestWriteFileIfUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ipynb")
	s1, err := WriteFileIfUnchanged(path, []byte("one"), Stamp{})
	if err != nil || s1 != StampOf([]byte("one")) || !s1.Exists() {
		t.Fatalf("create: %v, %v", s1, err)
	}
	if _, err := WriteFileIfUnchanged(path, []byte("two"), Stamp{}); !errors.Is(err, ErrConflict) {
		t.Errorf("create over an existing file: %v, want ErrConflict", err)
	}
	if _, err := WriteFileIfUnchanged(path, []byte("two"), s1); err != nil {
		t.Errorf("replace with the right stamp: %v", err)
	}
	if got := string(readFile(t, path)); got != "two" {
		t.Errorf("file = %q, want two", got)
	}
}

// TestLockedEditsLoseNothing: goroutines that each lock, load, insert a
// cell and save all succeed, and every cell is in the file.
func TestLockedEditsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.ipynb")
	const editors = 8
	errs := make([]error, editors)
	var wg sync.WaitGroup
	for i := range editors {
		wg.Go(func() {
			errs[i] = lockedInsert(path, fmt.Sprint("cell ", i))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("editor %d: %v", i, err)
		}
	}
	nb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if nb.Len() != editors {
		t.Errorf("%d cells, want %d: edits were lost\n%s", nb.Len(), editors, nb.Text())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("files left beside the notebook: %v", left)
	}
}

func lockedInsert(path, source string) error {
	lk, err := Lock(context.Background(), path)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	nb, err := LoadOrNew(path)
	if err != nil {
		return err
	}
	if err := nb.Insert(0, Code, source); err != nil {
		return err
	}
	return nb.Save(path)
}

// TestLockWaitsForItsHolder: a second Lock of the same file, by another
// spelling of its path, waits until the first is released, and gives up
// with a *LockedError naming the lock file when its context ends first.
func TestLockWaitsForItsHolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.ipynb")
	link := filepath.Join(dir, "link.ipynb")
	os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644)
	if err := os.Symlink("n.ipynb", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	first, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, link)
	var locked *LockedError
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &locked) ||
		!strings.Contains(err.Error(), ".n.ipynb.evalhost-lock") {
		t.Fatalf("Lock while held: %v, want a *LockedError naming the lock file", err)
	}
	got := make(chan error, 1)
	go func() {
		second, err := Lock(context.Background(), link)
		if err == nil {
			err = second.Unlock()
		}
		got <- err
	}()
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	if err := <-got; err != nil {
		t.Errorf("second Lock after release: %v", err)
	}
}

// TestLockRefusesAPlantedLockFile: a symlink planted where the lock file
// goes is not followed.
func TestLockRefusesAPlantedLockFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, ".n.ipynb.evalhost-lock")); err != nil {
		t.Skip("no symlinks:", err)
	}
	lk, err := Lock(context.Background(), filepath.Join(dir, "n.ipynb"))
	if err == nil {
		lk.Unlock()
		t.Fatal("Lock followed a planted symlink")
	}
	// The error says what is there and what to do, not only ELOOP's
	// "too many levels of symbolic links".
	if !errors.Is(err, ErrBadLockFile) || !strings.Contains(err.Error(), "is a symbolic link") || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("Lock = %v; want ErrBadLockFile saying the lock file is a symlink to remove", err)
	}
	if got := string(readFile(t, victim)); got != "keep" {
		t.Errorf("victim = %q", got)
	}
}

// A notebook whose directory is missing is named as such, not by the lock
// file's ENOENT, which read as if evalhost had lost its own file.
func TestLockInAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nodir")
	_, err := Lock(context.Background(), filepath.Join(dir, "n.ipynb"))
	if err == nil || !strings.Contains(err.Error(), "the directory "+dir+" does not exist") {
		t.Fatalf("Lock = %v; want an error saying the directory does not exist", err)
	}
}

// A directory that is there but makes no files (procfs answers ENOENT) is
// not said to be missing: "the directory /proc does not exist: create it
// first" sent the reader after a directory that was there.
func TestLockInADirectoryThatMakesNoFiles(t *testing.T) {
	if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
		t.Skip("no procfs")
	}
	_, err := Lock(context.Background(), "/proc/n.ipynb")
	if err == nil || strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "/proc cannot hold files") {
		t.Fatalf("Lock = %v; want an error saying /proc cannot hold files, not that it does not exist", err)
	}
}
