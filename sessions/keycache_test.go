package sessions

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A cwd's resolution is reused while the directory is unchanged, and redone
// when it changes: a .venv created after the first request is picked up by
// the next, and a cwd removed and made again is checked again.
func TestKeyCacheFollowsTheCwd(t *testing.T) {
	dir := t.TempDir()
	r := newTestRegistry(t, Config{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	req := &Request{Cwd: dir, Cells: []Cell{py("1")}}
	abs, _, first, err := r.resolveKey(req, dir)
	if err != nil || abs != dir {
		t.Fatalf("resolveKey = %q, %+v, %v", abs, first, err)
	}
	if _, ok := r.keys.get(r.keyInput(dir, ""), r.cfg.Home); !ok {
		t.Fatal("an unchanged cwd's entry does not hold")
	}
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", filepath.Join(dir, ".venv")).CombinedOutput(); err != nil {
		t.Skipf("cannot create a venv: %v %s", err, out)
	}
	_, _, second, err := r.resolveKey(req, dir)
	if err != nil || second.Source != ".venv" {
		t.Fatalf("after creating .venv: %+v, %v; want the .venv's interpreter (first was %+v)", second, err, first)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := r.resolveKey(req, dir); err == nil {
		t.Fatal("a removed cwd still resolves from the cache")
	}
}

// A relative cwd's entry holds only while the process's working directory
// is the one it was resolved in.
func TestKeyCacheRelativeCwd(t *testing.T) {
	r := newTestRegistry(t, Config{Getenv: func(string) string { return "" }})
	a, b := t.TempDir(), t.TempDir()
	t.Chdir(a)
	req := &Request{Cells: []Cell{py("1")}}
	if abs, _, _, err := r.resolveKey(req, "."); err != nil || !sameDir(abs, a) {
		t.Fatalf("resolveKey(.) in %s = %q, %v", a, abs, err)
	}
	t.Chdir(b)
	if abs, _, _, err := r.resolveKey(req, "."); err != nil || !sameDir(abs, b) {
		t.Fatalf("after chdir to %s: resolveKey(.) = %q, %v", b, abs, err)
	}
}

// sameDir compares directories by identity: a temporary directory's path
// may go through a symlink (macOS's /var).
func sameDir(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// An entry checked by stats (before the watch, or where there is none)
// holds when files are made in the cwd or the home (an agent's edits,
// evalhost's own files) and not when a name resolution looks up there
// changes: every next request would otherwise be resolved again.
func TestKeyCacheStatsSeeOnlyWhatResolutionReads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		where func(cwd, home string) string // the directory the change is made in
		entry string
		holds bool
	}{
		{"a file in the cwd", func(cwd, _ string) string { return cwd }, "main.py", true},
		{"a directory in the home", func(_, home string) string { return home }, "artifacts", true},
		{"a .venv in the cwd", func(cwd, _ string) string { return cwd }, ".venv", false},
		{"a version file in the cwd", func(cwd, _ string) string { return cwd }, ".python-version", false},
		{"the managed venv in the home", func(_, home string) string { return home }, managedVenv, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd, home := t.TempDir(), t.TempDir()
			r := newTestRegistry(t, Config{Home: home, Getenv: func(string) string { return "" }})
			if _, _, _, err := r.resolveKey(&Request{Cwd: cwd, Cells: []Cell{py("1")}}, cwd); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(tc.where(cwd, home), tc.entry), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, ok := r.keys.get(r.keyInput(cwd, ""), home); ok != tc.holds {
				t.Errorf("the entry holds: %v, want %v", ok, tc.holds)
			}
		})
	}
}
