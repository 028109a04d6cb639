package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// nobody is the uid the tests give what "another user" owns.
const nobody = 65534

// TestModulesPlantedByAnotherUser: a session started in a directory anyone
// may write (/tmp) runs no module another user planted there, whatever it
// points at: a .evalhost of theirs whose modules link to a package of
// root's (the tester's http.server), or plain files of theirs. The first
// cell is warned, naming what was refused and why; the user's own modules
// still load.
func TestModulesPlantedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("planting files as another user needs root")
	}
	tests := []struct {
		name  string
		plant func(t *testing.T, cwd, stdlib, mark string)
		why   string // in the warning
	}{
		{"a link to root's package", func(t *testing.T, cwd, stdlib, mark string) {
			dot := mkdirOwned(t, filepath.Join(cwd, ".evalhost"), nobody)
			linkOwned(t, stdlib, filepath.Join(dot, "modules"), nobody)
		}, "the directory " + "%CWD%/.evalhost that holds it is owned by uid 65534"},
		{"their own modules", func(t *testing.T, cwd, stdlib, mark string) {
			mods := mkdirOwned(t, filepath.Join(cwd, ".evalhost", "modules"), nobody)
			chownT(t, filepath.Dir(mods), nobody)
			writeOwned(t, filepath.Join(mods, "planted.py"), "open('"+mark+"', 'w').close()\n", nobody)
		}, "owned by uid 65534"},
		{"their link in a .evalhost of mine", func(t *testing.T, cwd, stdlib, mark string) {
			dot := mkdirOwned(t, filepath.Join(cwd, ".evalhost"), 0)
			linkOwned(t, stdlib, filepath.Join(dot, "modules"), nobody)
		}, "it is a symbolic link owned by uid 65534, who can point it elsewhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cwd := filepath.Join(root, "tmp")
			if err := os.Mkdir(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(cwd, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			mark := filepath.Join(root, "ran")
			// A package root owns, closed to others: what a link may point at.
			stdlib := mkdirOwned(t, filepath.Join(root, "usr", "lib", "http"), 0)
			writeOwned(t, filepath.Join(stdlib, "server.py"), "open('"+mark+"', 'w').close()\n", 0)
			home := t.TempDir()
			mkdirOwned(t, filepath.Join(home, "modules"), 0)
			writeOwned(t, filepath.Join(home, "modules", "mine.py"), "MINE = 1\n", 0)

			tt.plant(t, cwd, stdlib, mark)
			r := newTestRegistry(t, Config{Home: home})
			res, c := eval(t, r, Request{Cwd: cwd, Cells: []Cell{py("print(MINE)")}})
			if fileExists(mark) {
				t.Fatalf("a planted module ran")
			}
			if res.Status != StatusOK || strings.TrimSpace(c.Output()) != "1" {
				t.Errorf("cell: %+v %q; want ok with the user's own module loaded", res.Cells[0], c.Output())
			}
			why := strings.ReplaceAll(tt.why, "%CWD%", cwd)
			var warned bool
			for _, f := range c.All() {
				if f.Type == frames.TypeWarning && strings.Contains(f.Message, filepath.Join(cwd, ".evalhost", "modules")) {
					warned = true
					for _, s := range []string{"not loaded", why, "another user could run code as you"} {
						if !strings.Contains(f.Message, s) {
							t.Errorf("warning lacks %q: %s", s, f.Message)
						}
					}
				}
			}
			if !warned {
				t.Errorf("no warning names the refused modules; frames %+v", c.All())
			}
		})
	}
}

func mkdirOwned(t *testing.T, dir string, uid int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	chownT(t, dir, uid)
	return dir
}

func writeOwned(t *testing.T, path, content string, uid int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	chownT(t, path, uid)
}

func linkOwned(t *testing.T, target, path string, uid int) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	chownT(t, path, uid)
}

func chownT(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
