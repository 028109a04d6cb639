package notebook

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSaveOfANewFileIsExclusive: a notebook bound to a file not there yet
// (LoadOrNew's, NewAt's) is saved only while nothing is there, and that
// holds up to the write itself: a file another program makes between the
// save's check and its rename is not replaced (the check and a rename
// were two steps, and a file made between them was lost). Nor is the
// target of a dangling symlink made meanwhile.
func TestSaveOfANewFileIsExclusive(t *testing.T) {
	theirs := []byte("their notebook\n")
	for _, tc := range []struct {
		name string
		link bool // the path is a dangling symlink of the user's
		save func(nb *Notebook, path string) error
	}{
		{"Save", false, (*Notebook).Save},
		{"SaveUnsynced", false, (*Notebook).SaveUnsynced},
		{"Save through a dangling link", true, (*Notebook).Save},
		{"WriteFileIfUnchanged of no file", false, func(_ *Notebook, path string) error {
			_, err := WriteFileIfUnchanged(path, []byte(`{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`), Stamp{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, made := filepath.Join(dir, "new.ipynb"), filepath.Join(dir, "new.ipynb")
			if tc.link {
				made = filepath.Join(dir, "target.ipynb")
				if err := os.Symlink("target.ipynb", path); err != nil {
					t.Fatal(err)
				}
			}
			nb, err := LoadOrNew(path)
			if err != nil {
				t.Fatal(err)
			}
			beforePublish = func(string) {
				if err := os.WriteFile(made, theirs, 0o644); err != nil {
					t.Error(err)
				}
			}
			t.Cleanup(func() { beforePublish = nil })
			if err := tc.save(nb, path); !errors.Is(err, ErrConflict) {
				t.Errorf("save while another program made the file: %v, want ErrConflict", err)
			}
			if got := readFile(t, made); string(got) != string(theirs) {
				t.Errorf("%s was replaced: %.60q", made, got)
			}
			assertNoTempFiles(t, dir)
		})
	}
}

// TestNewAtDoesNotRead: NewAt binds an empty notebook to a path without
// reading what is there, which its save then refuses to replace.
func TestNewAtDoesNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ipynb")
	if err := os.WriteFile(path, []byte(`{"cells": [], "metadata": {"theirs": 1}, "nbformat": 4, "nbformat_minor": 4}`), 0o644); err != nil {
		t.Fatal(err)
	}
	nb := NewAt(path)
	if major, minor := nb.Version(); nb.Len() != 0 || major != 4 || minor != 5 {
		t.Fatalf("NewAt: %d cells, version %d.%d; want an empty 4.5 notebook", nb.Len(), major, minor)
	}
	if err := nb.Save(path); !errors.Is(err, ErrConflict) {
		t.Errorf("save over a file NewAt did not read: %v, want ErrConflict", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(path); err != nil {
		t.Errorf("save once nothing is there: %v", err)
	}
}

// TestLinkNew: the hard link publishNew falls back to (and other
// platforms use) takes a free name, the temp name gone, and refuses a
// taken one, which keeps its content.
func TestLinkNew(t *testing.T) {
	dir := t.TempDir()
	temp, path := filepath.Join(dir, ".n.ipynb.1.tmp"), filepath.Join(dir, "n.ipynb")
	for _, p := range []string{temp, path} {
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := linkNew(temp, path); !errors.Is(err, os.ErrExist) {
		t.Errorf("linkNew to a taken name: %v, want ErrExist", err)
	}
	if got := readFile(t, path); string(got) != path {
		t.Errorf("the taken name holds %q", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := linkNew(temp, path); err != nil {
		t.Fatalf("linkNew to a free name: %v", err)
	}
	if got := readFile(t, path); string(got) != temp {
		t.Errorf("the new name holds %q", got)
	}
	if _, err := os.Lstat(temp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temp name is left: %v", err)
	}
}
