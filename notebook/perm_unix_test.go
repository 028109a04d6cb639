//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A new notebook gets the mode open(2) gives a new file under the umask, as
// nbformat.write (and so Jupyter, nbconvert and papermill) makes it: a user
// whose umask is 077 keeps the outputs from other local users; one whose
// umask is 002 shares them with the group. An existing file keeps its mode.
// Not parallel: the umask is the process's.
func TestWriteFileNewFileFollowsUmask(t *testing.T) {
	cases := []struct {
		name  string
		umask int
		want  os.FileMode
	}{
		{"umask 077", 0o077, 0o600},
		{"umask 022", 0o022, 0o644},
		{"umask 002", 0o002, 0o664},
		{"umask 027", 0o027, 0o640},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := syscall.Umask(c.umask)
			t.Cleanup(func() { syscall.Umask(old) })
			path := filepath.Join(t.TempDir(), "new.ipynb")
			if err := WriteFile(path, readFile(t, "testdata/basic.ipynb")); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != c.want {
				t.Errorf("new file's mode is %04o under umask %04o, want %04o", got, c.umask, c.want)
			}
			if err := os.Chmod(path, 0o640); err != nil {
				t.Fatal(err)
			}
			if err := WriteFile(path, readFile(t, "testdata/basic.ipynb")); err != nil {
				t.Fatal(err)
			}
			if st, err = os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
				t.Errorf("an existing 0640 file was rewritten with mode %v (%v), want it kept", st.Mode().Perm(), err)
			}
		})
	}
}

// A save replaces the file with a new one (the rename), which belongs to
// whoever saves: it gets the owner and group of the file it replaces, as
// the in-place write of nbformat.write (papermill) keeps them, so root's
// run of a user's notebook does not take it from its owner. Needs root.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	path := filepath.Join(t.TempDir(), "theirs.ipynb")
	if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, readFile(t, "testdata/basic.ipynb")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != nobody || sys.Gid != nobody {
		t.Fatalf("after a save the file belongs to %d:%d, want %d:%d as before", sys.Uid, sys.Gid, nobody, nobody)
	}
}
