//go:build unix

package testkit

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// Mkfifo makes a FIFO named name in dir (mode 0600) and returns its path.
func Mkfifo(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Tree is every name under dir, dir first, links not followed: what a
// test compares before and after to see nothing was created or removed.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
