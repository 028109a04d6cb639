package notebook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveThroughRetargetedSymlink: a notebook loaded through a symlink is
// saved through it after someone pointed the link at another notebook.
// Save wrote to the new target without a check, as a save to another path
// does, and that notebook's content was lost; it is a conflict. Found in
// review (it failed before and after the save-cost commits).
func TestSaveThroughRetargetedSymlink(t *testing.T) {
	dir := t.TempDir()
	a, b, link := filepath.Join(dir, "a.ipynb"), filepath.Join(dir, "b.ipynb"), filepath.Join(dir, "link.ipynb")
	data := New().Bytes()
	if err := os.WriteFile(a, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(data), `"metadata": {}`, `"metadata": {"other": "work"}`, 1)
	if err := os.WriteFile(b, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.ipynb", link); err != nil {
		t.Skip("no symlinks:", err)
	}
	nb, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.ipynb", link); err != nil {
		t.Fatal(err)
	}
	if err := nb.Insert(0, Code, "mine"); err != nil {
		t.Fatal(err)
	}
	err = nb.Save(link)
	if got := string(readFile(t, b)); got != other || !errors.Is(err, ErrConflict) {
		t.Fatalf("Save(link) = %v; b.ipynb still holds the other notebook: %v; want ErrConflict and b unchanged", err, got == other)
	}
}
