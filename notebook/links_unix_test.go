//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// nobody is a uid that is not the test's: chowning to it needs root.
const nobody = 65534

// A save follows a symlink as open(2) does under fs.protected_symlinks: one
// another user planted in a sticky, world-writable directory (/tmp) is
// refused, whether it names a file of the victim's, a file to be created
// (Go's own resolution made it where the link pointed) or a directory on
// the way; a link of one's own there, one of the directory's owner, and
// one in a directory that is not sticky are followed as before.
func TestSaveRefusesAPlantedSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("planting another user's symlink needs root")
	}
	cases := []struct {
		name    string
		dirMode os.FileMode
		dirUID  int // -1: the test's
		linkUID int
		asDir   bool // the link is a directory on the way
		exists  bool // its target is there already
		refused bool
	}{
		{"another user's link to a file to be made", 0o777 | os.ModeSticky, -1, nobody, false, false, true},
		{"another user's link to a file there", 0o777 | os.ModeSticky, -1, nobody, false, true, true},
		{"another user's link to a directory on the way", 0o777 | os.ModeSticky, -1, nobody, true, false, true},
		{"one's own link", 0o777 | os.ModeSticky, -1, -1, false, false, false},
		{"the directory owner's link", 0o777 | os.ModeSticky, nobody, nobody, false, false, false},
		{"a directory that is not sticky", 0o777, -1, nobody, false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			shared, home := filepath.Join(dir, "tmp"), filepath.Join(dir, "home")
			for _, d := range []string{shared, home} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			target := filepath.Join(home, "victim.ipynb")
			if tc.exists {
				if err := os.WriteFile(target, []byte("mine"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			link, save := filepath.Join(shared, "x.ipynb"), filepath.Join(shared, "x.ipynb")
			dest := target
			if tc.asDir {
				link, save, dest = filepath.Join(shared, "d"), filepath.Join(shared, "d", "victim.ipynb"), home
			}
			if err := os.Symlink(dest, link); err != nil {
				t.Fatal(err)
			}
			if tc.linkUID >= 0 {
				if err := os.Lchown(link, tc.linkUID, tc.linkUID); err != nil {
					t.Fatal(err)
				}
			}
			if tc.dirUID >= 0 {
				if err := os.Chown(shared, tc.dirUID, tc.dirUID); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(shared, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			lock, err := Lock(context.Background(), save)
			if err == nil {
				defer lock.Unlock()
			}
			if locks, _ := filepath.Glob(filepath.Join(home, ".*evalhost-lock")); tc.refused && len(locks) > 0 {
				t.Errorf("the lock was made through the link: %v", locks)
			}
			if tc.refused != errors.Is(err, ErrPlantedLink) {
				t.Errorf("Lock: %v; want it refused: %v", err, tc.refused)
			}
			nb := New()
			if err := nb.Insert(0, Code, "x"); err != nil {
				t.Fatal(err)
			}
			err = nb.Save(save)
			if !tc.refused {
				if err != nil {
					t.Fatalf("Save: %v", err)
				}
				if got := readFile(t, target); string(got) != string(nb.Bytes()) {
					t.Errorf("the link's target holds %q", got)
				}
				return
			}
			var le *LinkError
			if !errors.Is(err, ErrPlantedLink) || !errors.As(err, &le) || le.Link != link || le.Owner != nobody {
				t.Fatalf("Save: %v; want a *LinkError for %s", err, link)
			}
			want := "absent"
			if tc.exists {
				want = "mine"
			}
			got, rerr := os.ReadFile(target)
			if rerr != nil {
				got = []byte("absent")
			}
			if string(got) != want {
				t.Errorf("the victim's file holds %q, want %q", got, want)
			}
		})
	}
}
