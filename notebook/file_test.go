package notebook

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveReplacesAtomicallyAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.ipynb")
	if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o600); err != nil {
		t.Fatal(err)
	}
	nb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := nb.Edit(0, "changed"); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(path); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !bytes.Equal(got, nb.Bytes()) {
		t.Errorf("saved bytes differ from the notebook")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", st.Mode().Perm())
	}
	assertNoTempFiles(t, dir)
}

func TestSaveFailureLeavesFileUnchanged(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to save to
		want  string
	}{
		{"target is a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d.ipynb")
			os.Mkdir(p, 0o755)
			return p
		}, "it is a directory, not a notebook file"},
		{"directory missing", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing", "n.ipynb")
		}, "no such file or directory"},
		{"read-only file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "ro.ipynb")
			os.WriteFile(p, readFile(t, "testdata/basic.ipynb"), 0o444)
			return p
		}, "read-only (mode 0444); make it writable"},
		{"symlink to a read-only file", func(t *testing.T, dir string) string {
			os.WriteFile(filepath.Join(dir, "ro.ipynb"), readFile(t, "testdata/basic.ipynb"), 0o444)
			p := filepath.Join(dir, "link.ipynb")
			os.Symlink("ro.ipynb", p)
			return p
		}, "read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before, _ := os.ReadFile(path)
			err := New().Save(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Errorf("the file changed")
			}
			assertNoTempFiles(t, dir)
		})
	}
}

func TestLoadMissingAndLoadOrNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.ipynb")
	if _, err := Load(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
	nb, err := LoadOrNew(path)
	if err != nil || nb.Len() != 0 {
		t.Fatalf("LoadOrNew = %v, %v", nb, err)
	}
	if major, minor := nb.Version(); major != 4 || minor != 5 {
		t.Errorf("new notebook version %d.%d, want 4.5", major, minor)
	}
	bad := filepath.Join(t.TempDir(), "bad.ipynb")
	os.WriteFile(bad, []byte(`{"cells": 3}`), 0o644)
	if _, err := LoadOrNew(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadOrNew of an invalid file: %v, want ErrInvalid naming the file", err)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

// TestSaveThroughSymlink: saving to a symlink replaces its target and keeps
// the link, as an editor saving in place does.
func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.ipynb")
	if err := os.WriteFile(target, readFile(t, "testdata/basic.ipynb"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ipynb")
	if err := os.Symlink("real.ipynb", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	nb, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	nb.Edit(0, "through the link")
	if err := nb.Save(link); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a file: %v %v", st.Mode(), err)
	}
	if got := readFile(t, target); !bytes.Equal(got, nb.Bytes()) {
		t.Errorf("the link's target was not updated")
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target mode = %v, want 0600 kept", st.Mode().Perm())
	}
	assertNoTempFiles(t, dir)
}

// A symlink whose target does not exist yet (a chain of two, here) is
// saved through too: the target is created and the link stays, as a shell's
// "> link" does; the link was replaced by a regular file.
func TestSaveThroughDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	link, mid := filepath.Join(dir, "link.ipynb"), filepath.Join(dir, "mid.ipynb")
	if err := os.Symlink("mid.ipynb", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(filepath.Join("sub", "later.ipynb"), mid); err != nil {
		t.Fatal(err)
	}
	nb := New()
	if err := nb.Insert(0, Code, "x"); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(link); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, mid} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("%s was replaced by a file: %v", l, err)
		}
	}
	if got := readFile(t, filepath.Join(dir, "sub", "later.ipynb")); !bytes.Equal(got, nb.Bytes()) {
		t.Errorf("the link's target holds %q", got)
	}
	assertNoTempFiles(t, dir)
}

func TestLanguage(t *testing.T) {
	tests := []struct{ name, metadata, want string }{
		{"none", `{}`, ""},
		{"kernelspec", `{"kernelspec": {"language": "R", "name": "ir"}}`, "R"},
		{"kernelspec wins", `{"kernelspec": {"language": "python"}, "language_info": {"name": "julia"}}`, "python"},
		{"language_info", `{"language_info": {"name": "bash"}}`, "bash"},
		{"not strings", `{"kernelspec": {"language": 3}, "language_info": []}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := mustParse(t, []byte(`{"cells": [], "metadata": `+tt.metadata+`, "nbformat": 4, "nbformat_minor": 5}`))
			if got := nb.Language(); got != tt.want {
				t.Errorf("Language() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A path that ends in a separator names a directory, there or not: a save
// refuses it saying so, not with the error of a temp file it could not
// make inside it (".NNN.tmp": no such file or directory).
func TestWriteFileRefusesADirectoryPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "there"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"missing" + string(filepath.Separator), "there" + string(filepath.Separator)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name) + string(filepath.Separator)
			err := WriteFile(path, readFile(t, "testdata/basic.ipynb"))
			if err == nil || !strings.Contains(err.Error(), "names a directory") {
				t.Fatalf("WriteFile(%q) = %v, want an error saying it names a directory", path, err)
			}
			if err := CheckWritable(path); err == nil || !strings.Contains(err.Error(), "names a directory") {
				t.Fatalf("CheckWritable(%q) = %v, want an error saying it names a directory", path, err)
			}
		})
	}
}
