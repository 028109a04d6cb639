package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// TestModulesRecheckedAtLoad: the runner runs a module only when the file
// it opens is the one evalhost judged (FindModules) and still a regular
// file of the user's (or root's) that no one else may write; one changed
// in between (chowned, opened to others, replaced by another file, a link
// or a fifo, removed) is not executed, and its warning names it, says why
// and what to do. The modules beside it still load.
func TestModulesRecheckedAtLoad(t *testing.T) {
	dir, marker := t.TempDir(), t.TempDir()
	ran := func(name string) string {
		return "open(" + pyQuote(filepath.Join(marker, name)) + ", 'w').close()\n"
	}
	rootOwned := writeFile(t, t.TempDir(), "server.py", ran("link"))
	for _, n := range []string{"good", "chowned", "group_writable", "world_writable", "replaced", "link", "fifo", "removed"} {
		writeFile(t, dir, n+".py", ran(n))
	}
	writeFile(t, dir, "good.py", "GOOD = 1\n")
	mods, refused := FindModules([]ModulePlace{{Base: filepath.Dir(dir), Rel: filepath.Base(dir)}})
	if len(mods) != 8 || len(refused) != 0 {
		t.Fatalf("FindModules = %+v, %v; want all 8", mods, refused)
	}
	chown(t, filepath.Join(dir, "chowned.py"), nobody)
	for name, mode := range map[string]os.FileMode{"group_writable.py": 0o664, "world_writable.py": 0o666} {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	// Another file of the user's in its place: the same owner and mode, not
	// the file judged.
	if err := os.Rename(writeFile(t, t.TempDir(), "new.py", ran("replaced")), filepath.Join(dir, "replaced.py")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "link.py"))
	if err := os.Symlink(rootOwned, filepath.Join(dir, "link.py")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "fifo.py"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "removed.py"))

	p := start(t, startOpts{entries: mods})
	wants := map[string]string{
		"chowned.py":        "it is owned by uid 65534, not by you",
		"group_writable.py": "it is writable by group (mode 0664)",
		"world_writable.py": "it is writable by group and others (mode 0666)",
		"replaced.py":       "it is not the file evalhost checked",
		"link.py":           "it is not the file evalhost checked",
		"fifo.py":           "it is not a regular file",
		"removed.py":        "it cannot be opened (No such file or directory)",
	}
	for name, why := range wants {
		path := filepath.Join(dir, name)
		found := false
		for _, f := range p.early {
			if f.Type == frames.TypeWarning && strings.Contains(f.Message, path+" ") {
				found = true
				wantAll := []string{"was not loaded", why, "so another user could run code as you", "chmod go-w " + path}
				if name == "removed.py" {
					wantAll = wantAll[:2]
				}
				for _, s := range wantAll {
					if !strings.Contains(f.Message, s) {
						t.Errorf("warning for %s lacks %q: %s", name, s, f.Message)
					}
				}
			}
		}
		if !found {
			t.Errorf("no warning names %s; early frames %+v", path, p.early)
		}
	}
	if len(p.early) != len(wants) {
		t.Errorf("%d frames before ready, want the %d refusals: %+v", len(p.early), len(wants), p.early)
	}
	wantResult("1")(t, p.run("GOOD"))
	if entries, _ := os.ReadDir(marker); len(entries) != 0 {
		t.Errorf("refused modules ran: %v", entries)
	}
}

// TestFindModules: the modules a session runs are the *.py of the user's
// dir and then the project's, a project module overriding the user's of
// its name, in name order; a dir or file anyone but the user and root
// could change is refused with an error that names it, says why and what
// to do, and does not hide the user's module of its name.
func TestFindModules(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	user := filepath.Join(home, "modules")
	project := filepath.Join(cwd, ".evalhost", "modules")
	for _, d := range []string{user, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, user, "b.py", "")
	writeFile(t, user, "shared.py", "")
	writeFile(t, user, "theirs.py", "")
	writeFile(t, user, ".hidden.py", "")
	writeFile(t, user, "notes.txt", "")
	writeFile(t, project, "a.py", "")
	writeFile(t, project, "shared.py", "")
	chown(t, writeFile(t, project, "theirs.py", ""), nobody)
	places := []ModulePlace{{Base: home, Rel: "modules"}, {Base: cwd, Rel: filepath.Join(".evalhost", "modules")},
		{Base: cwd, Rel: "absent"}}

	mods, refused := FindModules(places)
	var got []string
	for _, m := range mods {
		got = append(got, m.Path)
		fi, err := os.Stat(m.Path)
		if id, ok := trustdir.IDOf(fi); err != nil || !m.HasID || ok && m.ID != id {
			t.Errorf("%s: ID %+v (has %v), want the file's %+v", m.Path, m.ID, m.HasID, id)
		}
	}
	want := []string{filepath.Join(project, "a.py"), filepath.Join(user, "b.py"), filepath.Join(project, "shared.py"), filepath.Join(user, "theirs.py")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("modules %q, want %q", got, want)
	}
	if len(refused) != 1 {
		t.Fatalf("refused %v, want theirs.py", refused)
	}
	var e *ModuleRefusedError
	msg := refused[0].Error()
	if !errors.As(refused[0], &e) || !errors.Is(refused[0], trustdir.ErrUntrusted) {
		t.Errorf("refusal %T %v: want a *ModuleRefusedError matching trustdir.ErrUntrusted", refused[0], refused[0])
	}
	for _, s := range []string{"extension module " + filepath.Join(project, "theirs.py") + " was not loaded", "owned by uid 65534",
		"so another user could run code as you", "chown -R $(id -u) " + filepath.Join(project, "theirs.py")} {
		if !strings.Contains(msg, s) {
			t.Errorf("refusal lacks %q: %s", s, msg)
		}
	}

	// The whole project dir refused: the user's modules all stay.
	if err := os.Chmod(project, 0o777); err != nil {
		t.Fatal(err)
	}
	mods, refused = FindModules(places)
	if len(mods) != 3 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "extension module dir "+project+" and its modules were not loaded: it is writable by group and others (mode 0777)") ||
		!strings.Contains(refused[0].Error(), "chmod go-w "+project) {
		t.Errorf("with the project dir 0777: %+v, %v; want the user's 3 and the dir refused", mods, refused)
	}
}

func pyQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// TestModuleOutputAtLoad: no cell exists while extension modules load, so
// what one shows (display(), get_ipython().run_cell's value or error,
// input()) cannot be a frame of a cell, whose id names it; each becomes a
// warning without id that names the module and carries its text, as what
// a module prints does, and a clear_output is dropped. The session then
// runs as usual, in both modes.
func TestModuleOutputAtLoad(t *testing.T) {
	code := "display('shown at load')\n" +
		"from IPython.display import clear_output\nclear_output()\n" +
		"get_ipython().run_cell('40 + 2')\n" +
		"get_ipython().run_cell('1/0')\n" +
		"try:\n    input('name? ')\nexcept Exception:\n    pass\n" +
		"LOADED = 1\n"
	for _, mode := range []struct {
		name    string
		env     []string
		ipython bool     // needs IPython installed
		want    []string // texts the warnings carry
	}{
		{"runner", nil, false, []string{"a display came at start-up from extension module", "'shown at load'", "42", "input() fails", "'name? '"}},
		{"full IPython", []string{"EVALHOST_IPYTHON=1"}, true, []string{"'shown at load'", "42", "an error came at start-up", "ZeroDivisionError", "'name? '"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.ipython {
				needIPython(t)
			}
			dir := t.TempDir()
			path := writeFile(t, dir, "shows.py", code)
			p := start(t, startOpts{modules: []string{dir}, env: mode.env})
			var texts []string
			for _, f := range p.early {
				if f.Type != frames.TypeWarning || f.ID != "" {
					t.Errorf("frame before ready: %+v, want only warnings without id", f)
					continue
				}
				if !strings.Contains(f.Message, path) {
					t.Errorf("warning does not name the module %s: %s", path, f.Message)
				}
				texts = append(texts, f.Message)
			}
			all := strings.Join(texts, "\n")
			for _, want := range mode.want {
				if !strings.Contains(all, want) {
					t.Errorf("no warning carries %q; warnings %q", want, texts)
				}
			}
			if strings.Contains(all, "clear_output") {
				t.Errorf("a clear_output was reported: %q", texts)
			}
			wantResult("1")(t, p.run("LOADED"))
		})
	}
}

// TestModuleSource: a backend that sends a module's code elsewhere (a
// gateway kernel) reads it from the file judged, as runner.py does: one
// changed since is refused, a fifo in its place without waiting for it.
func TestModuleSource(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		want   string // in the error; "" for the source
	}{
		{"unchanged", func(*testing.T, string) {}, ""},
		{"opened to others", func(t *testing.T, path string) { os.Chmod(path, 0o666) }, "it is writable by group and others (mode 0666)"},
		{"chowned", func(t *testing.T, path string) { chown(t, path, nobody) }, "it is owned by uid 65534"},
		{"replaced", func(t *testing.T, path string) {
			if err := os.Rename(writeFile(t, t.TempDir(), "x.py", "X = 2\n"), path); err != nil {
				t.Fatal(err)
			}
		}, "it is not the file evalhost checked"},
		{"a fifo", func(t *testing.T, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "it is not a regular file"},
		{"removed", func(t *testing.T, path string) { os.Remove(path) }, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "m.py", "X = 1\n")
			mods, refused := FindModules([]ModulePlace{{Base: filepath.Dir(dir), Rel: filepath.Base(dir)}})
			if len(mods) != 1 || len(refused) != 0 {
				t.Fatalf("FindModules = %+v, %v", mods, refused)
			}
			tt.change(t, path)
			src, err := mods[0].Source()
			switch {
			case tt.want == "" && (err != nil || string(src) != "X = 1\n"):
				t.Errorf("Source() = %q, %v; want the file's code", src, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path+" was not loaded")):
				t.Errorf("Source() = %q, %v; want a refusal naming %s: %s", src, err, path, tt.want)
			}
		})
	}
}
