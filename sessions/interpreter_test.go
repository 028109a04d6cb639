package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode"
)

// Concurrent first requests resolve the interpreter once: each used to
// start the interpreter to probe it, as many times as there were requests.
func TestConcurrentFirstRequestsProbeOnce(t *testing.T) {
	const n = 6
	real, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	count, release := filepath.Join(dir, "probes"), filepath.Join(dir, "release")
	// A fake interpreter that records each start and holds until released,
	// so every request is resolving while the first probe runs. Only the
	// probe passes -c; the runner it starts later is not counted.
	fake := filepath.Join(dir, "python")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = -c ]; then echo probe >> %q; while [ ! -e %q ]; do sleep 0.01; done; fi\nexec %q \"$@\"\n", count, release, real)
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, Config{Python: fake, MaxSessions: n})
	var calling, wg sync.WaitGroup
	results := make([]Result, n)
	errs := make([]error, n)
	for i := range n {
		calling.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			calling.Done()
			results[i], errs[i] = r.Eval(context.Background(), Request{Session: fmt.Sprint("p", i), Cwd: dir, Cells: []Cell{py("print('ran')")}}, nil)
		}()
	}
	calling.Wait()
	waitFor(t, func() bool { _, err := os.Stat(count); return err == nil })
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i].Status != StatusOK {
			t.Errorf("request %d: %v %+v", i, errs[i], results[i])
		}
	}
	data, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if probes := strings.Count(string(data), "probe"); probes != 1 {
		t.Errorf("the interpreter was probed %d times for %d concurrent first requests, want once", probes, n)
	}
}

// A candidate that cannot be opened is "not found" only when it is not
// there: out of file descriptors (a flood of connections to the tool
// bridge) read as a missing interpreter.
func TestOpenErrorSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"missing", &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, "not found"},
		{"a file on the way", &fs.PathError{Op: "open", Path: "/x/y", Err: syscall.ENOTDIR}, "not found"},
		{"out of descriptors", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EMFILE}, "too many open files"},
		{"no permission", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, "permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := openError(tc.err).Error(); got != tc.want {
				t.Fatalf("openError = %q, want %q", got, tc.want)
			}
		})
	}
}

// giveProject gives cwd and all in it to another user (65534); only root
// can, so t is skipped otherwise.
func giveProject(t *testing.T, cwd string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the project to another user")
	}
	err := filepath.WalkDir(cwd, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A .venv in the cwd is used only when no one else could have put its
// python there: in /tmp, another user's .venv would run as whoever starts
// evalhost. It is refused, not passed over for another interpreter, unless
// the user listed the project in their safe directories (and then not
// when everyone may write it).
func TestCwdVenvJudged(t *testing.T) {
	real, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	if real, err = filepath.EvalSymlinks(real); err != nil {
		t.Fatal(err)
	}
	theirs := giveProject
	site := filepath.Join(".venv", "lib", "python3.11", "site-packages")
	// A third user's hand in what the venv's python reads at start.
	third := func(rel string) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.Lchown(filepath.Join(cwd, rel), 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}
	}
	chmod := func(rel string, mode fs.FileMode) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			if err := os.Chmod(filepath.Join(cwd, rel), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	evil := func(t *testing.T, cwd string) {
		if err := os.WriteFile(filepath.Join(cwd, site, "evil.pth"), []byte("import os\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		third(filepath.Join(site, "evil.pth"))(t, cwd)
	}
	mkdir := func(t *testing.T, p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// imports writes a .pth of one line in site-packages and the files
	// named (a trailing / makes a directory), the first of which is then
	// spoiled by spoil.
	imports := func(line string, spoil func(string) func(t *testing.T, cwd string), files ...string) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, site, "start.pth"), []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				p := filepath.Join(cwd, site, f)
				if strings.HasSuffix(f, "/") {
					mkdir(t, p)
					continue
				}
				mkdir(t, filepath.Dir(p))
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			spoil(filepath.Join(site, files[0]))(t, cwd)
		}
	}
	writable := func(rel string) func(t *testing.T, cwd string) { return chmod(rel, 0o666) }
	// paths writes a .pth of lines (%CWD% the cwd) in site-packages and a
	// directory theirs in the cwd, holding sitecustomize.py and hook.py,
	// then spoils it.
	paths := func(lines string, spoil func(t *testing.T, cwd string)) func(t *testing.T, cwd string) {
		return func(t *testing.T, cwd string) {
			text := strings.ReplaceAll(lines, "%CWD%", cwd)
			if err := os.WriteFile(filepath.Join(cwd, site, "start.pth"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			mkdir(t, filepath.Join(cwd, "theirs"))
			for _, f := range []string{"sitecustomize.py", "hook.py"} {
				if err := os.WriteFile(filepath.Join(cwd, "theirs", f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			spoil(t, cwd)
		}
	}
	lib64 := func(t *testing.T, cwd string) {
		lib := filepath.Join(cwd, ".venv", "lib64")
		if err := os.Remove(lib); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(lib, "python3.11", "site-packages"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		spoil func(t *testing.T, cwd string) // nil for none
		safe  string                         // the home's safe-directories; %CWD% is the cwd
		want  string                         // in the refusal; "" for the venv used
	}{
		{"the user's own", nil, "", ""},
		{"a bin others may write", func(t *testing.T, cwd string) {
			if err := os.Chmod(filepath.Join(cwd, ".venv", "bin"), 0o777); err != nil {
				t.Fatal(err)
			}
		}, "", "chmod go-w"},
		{"another user's", func(t *testing.T, cwd string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the venv to another user")
			}
			if err := os.Lchown(filepath.Join(cwd, ".venv"), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "", "owned by uid 65534"},
		{"another user's project", theirs, "", "if you trust uid 65534 with %CWD%, list it as a safe directory: echo %CWD% >> %HOME%/safe-directories"},
		{"another user's project, listed", theirs, "%CWD%\n", ""},
		{"another user's project, every directory listed", theirs, "*\n", ""},
		{"another user's project, its parent's children listed", theirs, "%PARENT%/*\n", ""},
		{"another user's project, a sibling listed", theirs, "%CWD%-sibling\n", "owned by uid 65534"},
		{"another user's project, listed relative", theirs, "proj\n", `safe-directories:1: safe directory "proj" is not an absolute path`},
		{"another user's project, listed, writable by everyone", func(t *testing.T, cwd string) {
			theirs(t, cwd)
			if err := os.Chmod(cwd, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "%CWD%\n", "writable by everyone (mode 0777) without the sticky bit"},
		{"site-packages others may write", chmod(site, 0o777), "", "site-packages: it is writable by group and others (mode 0777)"},
		{"site-packages another user's", third(site), "", "site-packages: it is owned by uid 54321"},
		{"python3.11 another user's", third(filepath.Dir(site)), "", "lib/python3.11: it is owned by uid 54321"},
		{"a .pth another user's", evil, "", "evil.pth: it is owned by uid 54321"},
		{"a .pth others may write", chmod(filepath.Join(site, "ok.pth"), 0o666), "", "ok.pth: it is writable by group and others (mode 0666)"},
		{"pyvenv.cfg another user's", third(filepath.Join(".venv", "pyvenv.cfg")), "", "pyvenv.cfg: it is owned by uid 54321"},
		{"a real lib64, others may write", func(t *testing.T, cwd string) {
			lib64(t, cwd)
			chmod(filepath.Join(".venv", "lib64", "python3.11", "site-packages"), 0o777)(t, cwd)
		}, "", "lib64/python3.11/site-packages: it is writable by group and others (mode 0777)"},
		{"a real lib64", lib64, "", ""},
		{"a site-packages yet to be made, python3.11 others may write", func(t *testing.T, cwd string) {
			if err := os.RemoveAll(filepath.Join(cwd, site)); err != nil {
				t.Fatal(err)
			}
			chmod(filepath.Dir(site), 0o777)(t, cwd)
		}, "", "python3.11: it is writable by group and others (mode 0777)"},
		{"a pypy site directory another user's", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, ".venv", "lib", "pypy3.10", "site-packages"))
			third(filepath.Join(".venv", "lib", "pypy3.10", "site-packages"))(t, cwd)
		}, "", "pypy3.10/site-packages: it is owned by uid 54321"},
		{"a sitecustomize package another user's", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, site, "sitecustomize"))
			if err := os.WriteFile(filepath.Join(cwd, site, "sitecustomize", "__init__.py"), []byte("import os\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			third(filepath.Join(site, "sitecustomize", "__init__.py"))(t, cwd)
		}, "", "__init__.py: it is owned by uid 54321"},
		{"a sitecustomize.pyc another user's", func(t *testing.T, cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, site, "sitecustomize.pyc"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			third(filepath.Join(site, "sitecustomize.pyc"))(t, cwd)
		}, "", "sitecustomize.pyc: it is owned by uid 54321"},
		{"a __pycache__ others may write", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, site, "__pycache__"))
			chmod(filepath.Join(site, "__pycache__"), 0o777)(t, cwd)
		}, "", "__pycache__: it is writable by group and others (mode 0777)"},
		{"a home another user's", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs", "bin"))
			mkdir(t, filepath.Join(cwd, "theirs", "lib", "python3.11"))
			third("theirs")(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "pyvenv.cfg"), []byte("home = "+filepath.Join(cwd, "theirs", "bin")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "the directory %CWD%/theirs that holds it is owned by uid 54321"},
		// getpath strips a key with str.strip, whose whitespace has U+001F.
		{"a home another user's, a unit separator after its key", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs", "bin"))
			mkdir(t, filepath.Join(cwd, "theirs", "lib", "python3.11"))
			third("theirs")(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "pyvenv.cfg"), []byte("home\x1f = "+filepath.Join(cwd, "theirs", "bin")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "the directory %CWD%/theirs that holds it is owned by uid 54321"},
		{"a bin/pyvenv.cfg another user's, none above", func(t *testing.T, cwd string) {
			cfg := filepath.Join(".venv", "pyvenv.cfg")
			if err := os.Rename(filepath.Join(cwd, cfg), filepath.Join(cwd, ".venv", "bin", "pyvenv.cfg")); err != nil {
				t.Fatal(err)
			}
			third(filepath.Join(".venv", "bin", "pyvenv.cfg"))(t, cwd)
		}, "", "bin/pyvenv.cfg: it is owned by uid 54321"},
		{"a .pth linking to another user's file", func(t *testing.T, cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, "their.pth"), []byte("import os\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			third("their.pth")(t, cwd)
			if err := os.Symlink(filepath.Join(cwd, "their.pth"), filepath.Join(cwd, site, "link.pth")); err != nil {
				t.Fatal(err)
			}
		}, "", "link.pth: it leads to %CWD%/their.pth, which is owned by uid 54321, not by you (uid 0); " +
			"remove the link %CWD%/.venv/lib/python3.11/site-packages/link.pth if you did not make it, " +
			"or if you trust %CWD%/their.pth, make it yours: chown -R $(id -u) %CWD%/their.pth && chmod -R go-w %CWD%/their.pth"},
		{"site-packages linking to a directory everyone may write", func(t *testing.T, cwd string) {
			open := filepath.Join(cwd, "open")
			mkdir(t, open)
			chmod("open", 0o1777)(t, cwd)
			if err := os.RemoveAll(filepath.Join(cwd, site)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(open, filepath.Join(cwd, site)); err != nil {
				t.Fatal(err)
			}
		}, "", "chmod go-w %CWD%/open"},
		// site.py appends site-packages to sys.path and lists it at every
		// start: whoever makes where the link leads has their .pth run.
		{"site-packages a link to nothing", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "open"))
			chmod("open", 0o777|fs.ModeSticky)(t, cwd)
			if err := os.RemoveAll(filepath.Join(cwd, site)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(cwd, "open", "sp"), filepath.Join(cwd, site)); err != nil {
				t.Fatal(err)
			}
		}, "", "site-packages is a symbolic link to %CWD%/open/sp, which does not exist: whoever makes it gets code run at python's start; " +
			"remove the link %CWD%/.venv/lib/python3.11/site-packages if it is stale, or make %CWD%/open/sp yourself"},
		{"lib a link to nothing", func(t *testing.T, cwd string) {
			if err := os.RemoveAll(filepath.Join(cwd, ".venv", "lib")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(cwd, "gone"), filepath.Join(cwd, ".venv", "lib")); err != nil {
				t.Fatal(err)
			}
		}, "", "lib is a symbolic link to %CWD%/gone, which does not exist"},
		{"a relative home another user's", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs", "bin"))
			third("theirs")(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "pyvenv.cfg"), []byte("home = theirs/bin\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "the directory %CWD%/theirs that holds it is owned by uid 54321"},
		{"a python._pth another user's", func(t *testing.T, cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "bin", "python._pth"), []byte("/nowhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			third(filepath.Join(".venv", "bin", "python._pth"))(t, cwd)
		}, "", "python._pth: it is owned by uid 54321"},
		{"a python._pth naming another user's directory", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs"))
			third("theirs")(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "bin", "python._pth"), []byte(filepath.Join(cwd, "theirs")+"\nimport site\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "theirs: it is owned by uid 54321"},
		{"a python._pth, through a linked venv, naming another user's directory relative", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs"))
			third("theirs")(t, cwd)
			store := filepath.Join(cwd, "store", "a")
			mkdir(t, store)
			if err := os.Rename(filepath.Join(cwd, ".venv"), filepath.Join(store, "v")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(store, "v"), filepath.Join(cwd, ".venv")); err != nil {
				t.Fatal(err)
			}
			// Joined to bin as python names it: cwd/.venv/bin/../../theirs.
			if err := os.WriteFile(filepath.Join(store, "v", "bin", "python._pth"), []byte("../../theirs\nimport site\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "theirs: it is owned by uid 54321"},
		// getpath reads a ._pth line as line.partition('#')[0].strip().
		{"a python._pth naming another user's directory, a comment after", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "theirs"))
			third("theirs")(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "bin", "python._pth"), []byte(filepath.Join(cwd, "theirs")+" # shared\nimport site\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "theirs: it is owned by uid 54321"},
		// It puts a directory on sys.path whether or not it exists yet,
		// ahead of the standard library's modules.
		{"a python._pth naming what is missing in a directory everyone may write", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "open"))
			chmod("open", 0o777|fs.ModeSticky)(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "bin", "python._pth"), []byte(filepath.Join(cwd, "open", "lib")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "python._pth names %CWD%/open/lib, which does not exist, in %CWD%/open, which everyone may write"},
		{"a home whose library others may write", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "mine", "bin"))
			mkdir(t, filepath.Join(cwd, "mine", "lib", "python3.11"))
			chmod(filepath.Join("mine", "lib", "python3.11"), 0o777)(t, cwd)
			if err := os.WriteFile(filepath.Join(cwd, ".venv", "pyvenv.cfg"), []byte("home = "+filepath.Join(cwd, "mine", "bin")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "python3.11: it is writable by group and others (mode 0777)"},
		{"an import line's module another user's", imports("import hook; hook.run()\n", third, "hook.py"), "", "hook.py: it is owned by uid 54321"},
		{"an import line's module others may write", imports("import hook; hook.run()\n", writable, "hook.py"), "", "hook.py: it is writable by group and others (mode 0666)"},
		{"the last of a line's imports another user's", imports("import a, b; import c\n", third, "c.py", "a.py", "b.py"), "", "c.py: it is owned by uid 54321"},
		{"a dotted import's submodule another user's", imports("import pkg.sub\n", third, "pkg/sub.py", "pkg/__init__.py"), "", "pkg/sub.py: it is owned by uid 54321"},
		{"a from import's subpackage another user's", imports("import os; from pkg import sub\n", third, "pkg/sub/__init__.py"), "", "sub/__init__.py: it is owned by uid 54321"},
		{"an __import__ call's package another user's", imports("import os; var = 'X'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_hack').add_shim(); \n",
			third, "_hack/__init__.py"), "", "_hack/__init__.py: it is owned by uid 54321"},
		{"an imported package another user's", imports("import pkg\n", third, "pkg/"), "", "pkg: it is owned by uid 54321"},
		{"an imported package's cached __init__ another user's", imports("import pkg\n", third, "pkg/__pycache__/__init__.cpython-311.pyc", "pkg/__init__.py"), "", "__init__.cpython-311.pyc: it is owned by uid 54321"},
		{"an imported module's cached bytecode others may write", imports("import hook\n", writable, "__pycache__/hook.cpython-311.opt-1.pyc", "hook.py"), "", "hook.cpython-311.opt-1.pyc: it is writable"},
		{"an imported extension module another user's", imports("import ext\n", third, "ext.cpython-311-x86_64-linux-gnu.so"), "", "ext.cpython-311-x86_64-linux-gnu.so: it is owned by uid 54321"},
		{"an imported sourceless .pyc others may write", imports("import comp\n", writable, "comp.pyc"), "", "comp.pyc: it is writable"},
		{"an import after a vertical tab (3.13's splitlines)", imports("/nowhere\vimport vt\n", third, "vt.py"), "", "vt.py: it is owned by uid 54321"},
		{"an import after a carriage return", imports("/nowhere\rimport cr\n", third, "cr.py"), "", "cr.py: it is owned by uid 54321"},
		// Not UTF-8, so 3.13 reads it in the locale's encoding: GB18030's
		// U+2028, which ends a line for str.splitlines.
		{"an import after a line separator in GB18030", imports("/nowhere\x816\xa65import gb\n", third, "gb.py"), "", "gb.py: it is owned by uid 54321"},
		{"an import line after a byte-order mark", imports("\ufeffimport bom\n", third, "bom.py"), "", "bom.py: it is owned by uid 54321"},
		{"a module no import line names another user's", imports("import hook\n", third, "other.py", "hook.py"), "", ""},
		{"a path line naming a module another user's", imports("hook\n", third, "hook.py"), "", ""},
		{"an import line indented", imports(" import hook\n", third, "hook.py"), "", ""},
		{"a module named in a comment another user's", imports("# import hook\n", third, "hook.py"), "", ""},
		{"a path line naming another user's directory", paths("%CWD%/theirs\n", third("theirs")), "", "start.pth names %CWD%/theirs, where python looks for code at start: " +
			"%CWD%/theirs: it is owned by uid 54321, not by you (uid 0); remove that line from %CWD%/.venv/lib/python3.11/site-packages/start.pth if you do not need it; " +
			"or remove %CWD%/theirs if it is not yours"},
		// str.rstrip strips U+001F (and U+001C-U+001E): a unit separator
		// is whitespace to python, not to unicode.IsSpace.
		{"a path line naming another user's directory, a unit separator after", paths("%CWD%/theirs\x1f\n", third("theirs")), "", "start.pth names %CWD%/theirs, where python looks for code at start"},
		{"a path line after a line separator in GB18030 naming another user's directory", paths("/nowhere\x816\xa65%CWD%/theirs\n", third("theirs")), "", "start.pth names %CWD%/theirs, where python looks for code at start"},
		{"a path line naming a directory everyone may write", paths("%CWD%/theirs\n", chmod("theirs", 0o1777)), "", "theirs: it is writable by group and others (mode 0777); " +
			"remove that line from %CWD%/.venv/lib/python3.11/site-packages/start.pth if you do not need it"},
		{"a path line naming a directory whose sitecustomize is another user's", paths("%CWD%/theirs\n", third(filepath.Join("theirs", "sitecustomize.py"))), "", "theirs/sitecustomize.py: it is owned by uid 54321"},
		{"a relative path line naming a directory whose sitecustomize others may write", paths("../../../../theirs\n", writable(filepath.Join("theirs", "sitecustomize.py"))), "", "theirs/sitecustomize.py: it is writable by group and others"},
		// Python joins a relative line to site-packages as it names it,
		// through the .venv link, not to where the link leads.
		{"a relative path line, through a linked venv, naming a directory whose sitecustomize is another user's", paths("../../../../theirs\n", func(t *testing.T, cwd string) {
			third(filepath.Join("theirs", "sitecustomize.py"))(t, cwd)
			store := filepath.Join(cwd, "store", "a", "b")
			mkdir(t, store)
			if err := os.Rename(filepath.Join(cwd, ".venv"), filepath.Join(store, "v")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(store, "v"), filepath.Join(cwd, ".venv")); err != nil {
				t.Fatal(err)
			}
		}), "", "theirs/sitecustomize.py: it is owned by uid 54321"},
		{"a path line naming a directory whose module an import line imports is another user's", paths("%CWD%/theirs\nimport hook\n", third(filepath.Join("theirs", "hook.py"))), "", "theirs/hook.py: it is owned by uid 54321"},
		{"a path line naming a zip another user's", paths("%CWD%/theirs/sitecustomize.py\n", third(filepath.Join("theirs", "sitecustomize.py"))), "", "theirs/sitecustomize.py: it is owned by uid 54321"},
		{"a path line naming one's own directory", paths("%CWD%/theirs\nimport hook\n", func(t *testing.T, cwd string) {}), "", ""},
		{"a path line naming what is missing in a directory everyone may write", paths("%CWD%/open/gone/src\n", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "open"))
			chmod("open", 0o777|fs.ModeSticky)(t, cwd) // as /tmp; os.Chmod drops a plain 0o1000
		}), "", "start.pth names %CWD%/open/gone/src, which does not exist, in %CWD%/open, which everyone may write: whoever makes it gets code run at python's start; " +
			"remove that line from %CWD%/.venv/lib/python3.11/site-packages/start.pth if it is stale, or make %CWD%/open/gone/src yourself"},
		// site.py's os.path.exists follows the link: once its target is
		// made, the directory is on sys.path.
		{"a path line naming a link to nothing", paths("%CWD%/link\n", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "open"))
			chmod("open", 0o777|fs.ModeSticky)(t, cwd)
			if err := os.Symlink(filepath.Join(cwd, "open", "src"), filepath.Join(cwd, "link")); err != nil {
				t.Fatal(err)
			}
		}), "", "start.pth names %CWD%/link, which does not exist, in %CWD%/link, which is a symbolic link to what does not exist"},
		{"a path line naming what is missing in one's own directory", paths("%CWD%/gone/src\n", func(t *testing.T, cwd string) {}), "", ""},
		// Another user's file where the path would be made stops stat
		// (ENOTDIR) and makes nothing missing: until they put a directory
		// with a sitecustomize.py in its place.
		{"a path line through another user's file in a directory everyone may write", paths("%CWD%/open/gone/src\n", func(t *testing.T, cwd string) {
			mkdir(t, filepath.Join(cwd, "open"))
			chmod("open", 0o777|fs.ModeSticky)(t, cwd) // as /tmp
			if err := os.WriteFile(filepath.Join(cwd, "open", "gone"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			third(filepath.Join("open", "gone"))(t, cwd)
		}), "", "start.pth names %CWD%/open/gone/src, which does not exist, in %CWD%/open/gone, which uid 54321 owns"},
		{"a path line through one's own file", paths("%CWD%/file/src\n", func(t *testing.T, cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}), "", ""},

		{"another user's project, listed, a third user's .pth", func(t *testing.T, cwd string) {
			theirs(t, cwd)
			evil(t, cwd)
		}, "%CWD%\n", "evil.pth: it is owned by uid 54321"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd, home := t.TempDir(), t.TempDir()
			venv := filepath.Join(cwd, ".venv")
			if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, filepath.Join(venv, "bin", "python")); err != nil {
				t.Fatal(err)
			}
			// As python -m venv lays it out: a .pth of a package's own is fine.
			if err := os.MkdirAll(filepath.Join(cwd, site), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, site, "ok.pth"), []byte("/nowhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = "+filepath.Dir(real)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("lib", filepath.Join(venv, "lib64")); err != nil {
				t.Fatal(err)
			}
			if tc.spoil != nil {
				tc.spoil(t, cwd)
			}
			subst := strings.NewReplacer("%CWD%", cwd, "%HOME%", home, "%PARENT%", filepath.Dir(cwd))
			if tc.safe != "" {
				if err := os.WriteFile(filepath.Join(home, SafeDirectoriesFile), []byte(subst.Replace(tc.safe)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			py, err := ResolveInterpreter("", cwd, home, func(string) string { return "" }, 0)
			var untrusted *UntrustedVenvError
			switch {
			case tc.want != "" && !errors.As(err, &untrusted):
				t.Fatalf("resolved %+v, %v; want the venv refused", py, err)
			case tc.want != "" && (!strings.Contains(err.Error(), "--python") || !strings.Contains(err.Error(), subst.Replace(tc.want))):
				t.Fatalf("error %q does not say %q, or what to do", err, subst.Replace(tc.want))
			case tc.want == "" && (err != nil || py.Source != ".venv"):
				t.Fatalf("resolved %+v, %v; want the cwd's .venv", py, err)
			}
		})
	}
}

// TestVenvRefusalPrintable: a refusal of a cwd venv prints the cwd's name
// quoted when it holds a control character: another user's project name
// must not fake a line of advice, or the terminal's, in the error.
func TestVenvRefusalPrintable(t *testing.T) {
	site := filepath.Join(".venv", "lib", "python3.11", "site-packages")
	spoils := []struct {
		name  string
		spoil func(t *testing.T, cwd string)
	}{
		{"a bin others may write", func(t *testing.T, cwd string) {
			if err := os.Chmod(filepath.Join(cwd, ".venv", "bin"), 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		// Refused by os.Lstat's *fs.PathError, not a trustdir one.
		{"a .pth linking to nothing", func(t *testing.T, cwd string) {
			if err := os.MkdirAll(filepath.Join(cwd, site), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("gone.pth", filepath.Join(cwd, site, "a.pth")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, sp := range spoils {
		for _, name := range []string{"x\necho '*' >> ~/.evalhost/safe-directories\n", "x\x1b[2K\x1b[1Afake"} {
			t.Run(sp.name, func(t *testing.T) {
				cwd := filepath.Join(t.TempDir(), name)
				if err := os.MkdirAll(filepath.Join(cwd, ".venv", "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(cwd, ".venv", "bin", "python"), nil, 0o755); err != nil {
					t.Fatal(err)
				}
				sp.spoil(t, cwd)
				_, err := ResolveInterpreter("", cwd, t.TempDir(), func(string) string { return "" }, 0)
				var untrusted *UntrustedVenvError
				if !errors.As(err, &untrusted) {
					t.Fatalf("resolved with %v; want the venv refused", err)
				}
				if msg := err.Error(); strings.ContainsFunc(msg, unicode.IsControl) || !strings.Contains(msg, fmt.Sprintf("%q", filepath.Join(cwd, ".venv", "bin", "python"))) {
					t.Errorf("refusal prints the name raw: %q", msg)
				}
			})
		}
	}
}
