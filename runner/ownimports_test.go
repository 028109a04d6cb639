package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// planted are modules the runner imports for itself on some path (or that
// those import in turn: traceback -> linecache -> tokenize), each as
// another local user could leave it in a directory a cell runs in.
var planted = []string{
	"traceback", "linecache", "tokenize", "token", "textwrap", "ast", "unicodedata", "contextlib",
	"json", "binascii", "html", "shlex", "math", "resource", "timeit", "shutil", "subprocess",
	"selectors", "fcntl", "termios", "difflib", "asyncio", "types", "re", "importlib", "pathlib",
	"http", "urllib", "email", "socket", "_colorize", "warnings", "collections", "functools",
	"keyword", "operator", "reprlib", "enum", "copyreg", "itertools", "tracemalloc",
}

// plant writes each planted module into a new directory, but for those
// a cell's own imports (its statements, run by exe -S, testkit.Python's when
// empty) load: python3 too finds those in the cwd. Importing a planted one
// leaves a file of its name in the returned markers directory and fails.
func plant(t *testing.T, exe, cellImports string) (dir, markers string) {
	t.Helper()
	dir, markers = t.TempDir(), t.TempDir()
	skip := map[string]bool{}
	if cellImports != "" {
		if exe == "" {
			exe = python(t)
		}
		out, err := exec.Command(exe, "-S", "-c", "import sys\nbefore = set(sys.modules)\n"+cellImports+
			"\nprint(*(set(sys.modules) - before))").Output()
		if err != nil {
			t.Fatalf("%s: %v", cellImports, err)
		}
		for _, name := range strings.Fields(string(out)) {
			skip[name] = true
		}
	}
	for _, name := range planted {
		if skip[name] {
			continue
		}
		writeFile(t, dir, name+".py", "import os\nopen(os.path.join("+pyStr(markers)+", __name__), 'w').close()\n"+
			"raise ImportError('planted ' + __name__)\n")
	}
	return dir, markers
}

// ran lists the planted modules that were imported.
func ran(t *testing.T, markers string) []string {
	t.Helper()
	ents, err := os.ReadDir(markers)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// attack is a row of the attacker's table.
type attack struct {
	name    string
	python  string   // the interpreter; testkit.Python's when empty
	runner  string   // runner.py to start; the shared copy when empty
	when    string   // beforeWarmUp, afterWarmUp, or "": the cells come as they come
	imports string   // the cells' own imports: python3 too takes their modules from the cwd, so none is planted
	cells   []string // each must end ok, unless ename says
	ename   string   // the error the last cell raises
	check   func(t *testing.T, c cellResult)
}

const (
	// The cells are sent before ready, as a host may pipeline them: the
	// warm-up, which waits for an idle spell, has imported nothing yet.
	beforeWarmUp = "before the warm-up"
	afterWarmUp  = "after the warm-up"
)

// TestOwnImportsIgnoreTheCwd is the attacker's view: another user planted
// traceback.py and friends where a cell runs (the runner's start cwd, or a
// request's cwd). What the runner imports for itself (at an error, a
// display, a magic, a tool call, the warm-up) and what those modules import
// while it uses them comes from the interpreter's own directories: none of
// the planted files runs, and the runner's output is what it is without
// them. So do the errors the interpreter reports itself (a thread's, a
// __del__'s: 3.13's threading.excepthook imports traceback, and formats
// through it). The cells import nothing themselves, but what imports says.
func TestOwnImportsIgnoreTheCwd(t *testing.T) {
	for _, tc := range []attack{
		{name: "error traceback", cells: []string{"def f():\n    return 1 / 0\nf()"}, ename: "ZeroDivisionError",
			check: wantTraceback("    return 1 / 0", "ZeroDivisionError: division by zero")},
		{name: "error on a line with wide characters", cells: []string{"s = '日本語' + 1"}, ename: "TypeError",
			check: wantTraceback("    s = '日本語' + 1", `TypeError: can only concatenate str (not "int") to str`)},
		{name: "syntax error", cells: []string{"x = (1,"}, ename: "SyntaxError",
			check: func(t *testing.T, c cellResult) {
				e, _ := c.first(frames.TypeError)
				if !slices.Contains(e.Traceback, "    x = (1,") || !strings.HasPrefix(e.Traceback[len(e.Traceback)-1], "SyntaxError: ") {
					t.Errorf("traceback\n%s", strings.Join(e.Traceback, "\n"))
				}
			}},
		{name: "get_ipython().showtraceback", cells: []string{"try:\n    1 / 0\nexcept ZeroDivisionError:\n    get_ipython().showtraceback()"},
			check: wantStderr("ZeroDivisionError: division by zero")},
		{name: "rich display", cells: []string{"class R:\n    def _repr_json_(self): return {'a': [1]}\n" +
			"    def _repr_png_(self): return b'\\x89PNG'\nR()"},
			check: func(t *testing.T, c cellResult) {
				r := wantResultFrame(t, c)
				if png, _ := r.Bundle.Text("image/png"); png != "iVBORw==" {
					t.Errorf("image/png %q in %v", png, keys(r.Bundle))
				}
			}},
		{name: "IPython.display shim", cells: []string{"from IPython.display import Code, JSON, display\n" +
			"display(JSON('{\"a\": 1}'), Code('<x>'))"},
			check: func(t *testing.T, c cellResult) {
				if ds := displays(c); len(ds) != 2 || !strings.Contains(text(t, ds[1].Bundle, "text/html"), "&lt;x&gt;") {
					t.Errorf("displays %+v", ds)
				}
			}},
		{name: "shell escape", cells: []string{"!echo hi", "out = !echo there\nout"},
			check: wantResult("['there']")},
		{name: "line and cell magics", cells: []string{"%time x = 1", "%timeit -n 1 -r 1 pass", "%%bash\necho b", "%cd ."}},
		{name: "top-level await", cells: []string{"async def f():\n    return 7\nawait f()"}, check: wantResult("7")},
		{name: "tool and diff helpers", cells: []string{"diff('a\\n', 'b\\n')", "tool.anything()"}, ename: "ToolError"},
		{name: "warm-up", when: afterWarmUp, cells: []string{"x = 1"}},
		{name: "thread error", when: beforeWarmUp, imports: "import threading",
			cells: []string{"import threading\nt = threading.Thread(target=lambda: 1 / 0)\nt.start()\nt.join()"},
			check: wantStderr("Exception in thread ", "ZeroDivisionError: division by zero")},
		// the hook's error goes to sys.excepthook
		{name: "thread error whose threading.excepthook fails", when: beforeWarmUp, imports: "import threading",
			cells: []string{"import threading\nthreading.excepthook = lambda args: {}['hook']\n" +
				"t = threading.Thread(target=lambda: 1 / 0)\nt.start()\nt.join()"},
			check: wantStderr("Exception in threading.excepthook:", "KeyError: 'hook'")},
		{name: "__del__ error", when: beforeWarmUp,
			cells: []string{"class D:\n    def __del__(self):\n        1 / 0\nd = D()\ndel d"},
			check: func(t *testing.T, c cellResult) {
				head := "Exception ignored in: <function D.__del__ "
				if testkit.PythonAtLeast(t, 3, 14) {
					head = "Exception ignored while calling deallocator <function D.__del__ "
				}
				wantStderr(head, "ZeroDivisionError: division by zero")(t, c)
			}},
		// 3.13 formats it through traceback, whose carets import unicodedata;
		// before, C code shows no line of a cell's
		{name: "thread error on a line with wide characters", when: afterWarmUp, imports: "import threading",
			cells: []string{"import threading\ndef f():\n    s = '日本語' + 1\nt = threading.Thread(target=f)\nt.start()\nt.join()"},
			check: func(t *testing.T, c cellResult) {
				lines := []string{"Exception in thread ", `TypeError: can only concatenate str (not "int") to str`}
				if testkit.PythonAtLeast(t, 3, 13) {
					lines = slices.Insert(lines, 1, "    s = '日本語' + 1")
				}
				wantStderr(lines...)(t, c)
			}},
	} {
		for _, where := range []string{"start cwd", "request cwd", "directory a cell added"} {
			t.Run(strings.TrimSpace(tc.name+" "+tc.when)+" in the "+where, func(t *testing.T) {
				dir, markers := plant(t, tc.python, tc.imports)
				c, p := tc.run(t, dir, where, markers)
				if tc.check != nil {
					tc.check(t, c)
				}
				if tc.when == afterWarmUp {
					waitWarm(t, p, markers) // the warm-up's own imports
				}
				if got := ran(t, markers); len(got) > 0 {
					t.Errorf("the runner ran planted %v", got)
				}
			})
		}
	}
}

// run runs the attack's cells in a new runner whose cells find dir where
// says; the last cell's result.
func (a attack) run(t *testing.T, dir, where, markers string) (cellResult, *proc) {
	t.Helper()
	o := startOpts{python: a.python, runner: a.runner, pyArgs: []string{"-S"}} // -S: the IPython shim, and site imports less ahead of the cells
	if where == "start cwd" {
		o.dir = dir
	}
	var reqs []map[string]any
	for _, code := range a.cells {
		if where == "directory a cell added" {
			reqs = append(reqs, map[string]any{"code": code})
		} else {
			reqs = append(reqs, map[string]any{"code": code, "cwd": dir})
		}
	}
	if where == "directory a cell added" {
		reqs = append([]map[string]any{{"code": "__import__('sys').path.insert(0, " + pyStr(dir) + ")"}}, reqs...)
	}
	if a.when == beforeWarmUp {
		o.pipelined = reqs
	}
	p := start(t, o)
	if a.when == afterWarmUp {
		waitWarm(t, p, markers)
	}
	var c cellResult
	for i, req := range reqs {
		if a.when == beforeWarmUp {
			c = p.collect(fmt.Sprintf("c%d", i+1), nil)
		} else {
			c = p.runReq(req)
		}
		if i < len(reqs)-1 || a.ename == "" {
			if d := c.done(); d.Status != frames.StatusOK {
				t.Fatalf("cell %q: done %+v; frames %+v", req["code"], d, c.frames)
			}
		} else {
			wantError(t, c, a.ename)
		}
	}
	return c, p
}

// wantStderr: the cell's stderr holds each of the lines given, in order.
func wantStderr(lines ...string) func(t *testing.T, c cellResult) {
	return func(t *testing.T, c cellResult) {
		t.Helper()
		rest := c.stderr
		for _, l := range lines {
			i := strings.Index(rest, l)
			if i < 0 {
				t.Errorf("stderr\n%s\nwant, in order,\n%s", c.stderr, strings.Join(lines, "\n"))
				return
			}
			rest = rest[i+len(l):]
		}
	}
}

// TestOwnImportsIgnoreTheCwdInIPythonMode: IPython's own start (its
// import, its shell's set-up) is the runner's, done where the runner was
// started: it loads from site-packages past the planted files, and without
// IPython an IPython.py planted there is not it.
func TestOwnImportsIgnoreTheCwdInIPythonMode(t *testing.T) {
	t.Run("IPython installed", func(t *testing.T) {
		needIPython(t)
		dir, markers := plant(t, "", "")
		p := start(t, startOpts{dir: dir, env: []string{"EVALHOST_IPYTHON=1"}})
		wantResult("True")(t, p.run("from IPython.core.interactiveshell import InteractiveShell\nisinstance(get_ipython(), InteractiveShell)"))
		if e := wantError(t, p.run("1 / 0"), "ZeroDivisionError"); !strings.Contains(strings.Join(e.Traceback, "\n"), "1 / 0") {
			t.Errorf("traceback %q", e.Traceback)
		}
		if got := ran(t, markers); len(got) > 0 {
			t.Errorf("the runner ran planted %v", got)
		}
	})
	// IPython 9 formats an error a second time for its history, outside
	// showtraceback: an exit's traceback (sys.exit in a cell) is only that
	// one, and its first import of stack_data found the cwd's.
	t.Run("an error history formats", func(t *testing.T) {
		needIPython(t)
		dir, markers := plant(t, "", "")
		for _, name := range []string{"stack_data", "executing", "pure_eval", "asttokens"} {
			writeFile(t, dir, name+".py", "import os\nopen(os.path.join("+pyStr(markers)+", __name__), 'w').close()\n")
		}
		p := start(t, startOpts{dir: dir, env: []string{"EVALHOST_IPYTHON=1"}})
		wantError(t, p.run("raise SystemExit(3)"), "SystemExit")
		if got := ran(t, markers); len(got) > 0 {
			t.Fatalf("the runner ran planted %v", got)
		}
		wantError(t, p.run("1 / 0"), "ZeroDivisionError")
	})
	t.Run("IPython missing", func(t *testing.T) {
		dir, markers := plant(t, "", "")
		writeFile(t, dir, "IPython.py", "import os\nopen(os.path.join("+pyStr(markers)+", __name__), 'w').close()\n")
		p := start(t, startOpts{dir: dir, env: []string{"EVALHOST_IPYTHON=1"}, pyArgs: []string{"-S"}})
		wantError(t, p.run("1 + 1"), "IPythonUnavailable")
		if got := ran(t, markers); len(got) > 0 {
			t.Errorf("the runner ran planted %v", got)
		}
	})
}

// wantTraceback: the error frame's traceback ends with the lines given.
func wantTraceback(last ...string) func(t *testing.T, c cellResult) {
	return func(t *testing.T, c cellResult) {
		t.Helper()
		e, ok := c.first(frames.TypeError)
		if !ok {
			t.Fatalf("no error frame: %+v", c.frames)
		}
		tb := e.Traceback
		i := slices.Index(tb, last[0])
		if i < 0 || !slices.Equal(withoutCarets(tb[i:]), last) {
			t.Errorf("traceback\n%s\nwant it to end\n%s", strings.Join(tb, "\n"), strings.Join(last, "\n"))
		}
	}
}

// withoutCarets drops 3.11's caret lines (and 3.8's caret under a syntax error).
func withoutCarets(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Trim(l, " ^~") != "" {
			out = append(out, l)
		}
	}
	return out
}

// waitWarm waits for the runner's warm-up to have imported ast, its last
// step: idle cells (it runs after 50 ms without one) until one sees it, or
// until a planted module ran (the warm-up stops at a failed import).
func waitWarm(t *testing.T, p *proc, markers string) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if markers != "" && len(ran(t, markers)) > 0 {
			return
		}
		if text(t, wantResultFrame(t, p.run("'ast' in __import__('sys').modules")).Bundle, "text/plain") == "True" {
			return
		}
	}
	t.Fatalf("the warm-up did not run within %v", watchdog)
}

// TestCellImportsKeepPythonSemantics is the friend's view: a cell's own
// imports still find the cwd's modules first, as in python3 and IPython,
// before and after the runner imported its own (an error; the warm-up,
// which ends at once here: TestWarmUpLeavesCellsModulesIn), a local module
// named as a stdlib one (random) included, and so does a
// thread of the cell's that imports while the runner's own imports are on
// in the main thread (an exception's __str__ runs while its traceback is
// formatted).
func TestCellImportsKeepPythonSemantics(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mymod.py", "VALUE = 'local mymod'\n")
	writeFile(t, dir, "random.py", "VALUE = 'local random'\n")
	for i := 1; i <= 5; i++ {
		writeFile(t, dir, fmt.Sprintf("fromthread%d.py", i), fmt.Sprintf("VALUE = 'local %d'\n", i))
	}
	other := t.TempDir()
	writeFile(t, other, "added.py", "VALUE = 'added dir'\n")
	p := start(t, startOpts{pyArgs: []string{"-S"}}) // -S: site here imports random itself
	for _, tc := range []struct {
		name, code, result string
	}{
		{"an error first", "1 / 0", ""},
		{"local module", "import mymod\nmymod.VALUE", "'local mymod'"},
		{"local module named as a stdlib one", "import random\nrandom.VALUE", "'local random'"},
		{"a directory the cell added", "import sys\nsys.path.insert(0, " + pyStr(other) + ")\nimport added\nadded.VALUE", "'added dir'"},
		// __str__ runs once, as its traceback is formatted (the error
		// frame's evalue is that str), with the runner's own imports on;
		// each call's thread imports a module of its own
		{"a thread importing while a traceback is formatted",
			"import threading\ncalls, seen = [], []\n" +
				"def imp(n):\n    try:\n        seen.append(__import__('fromthread%d' % n).VALUE)\n" +
				"    except ImportError as e:\n        seen.append(repr(e))\n" +
				"class E(Exception):\n    def __str__(self):\n        calls.append(1)\n" +
				"        t = threading.Thread(target=imp, args=(len(calls),))\n" +
				"        t.start(); t.join()\n        return 'e'\nraise E()", ""},
		{"what the threads got", "len(calls) == 1 and seen == ['local %d' % n for n in range(1, len(calls) + 1)] or seen", "True"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(map[string]any{"code": tc.code, "cwd": dir})
			if tc.result == "" {
				if _, ok := c.first(frames.TypeError); !ok {
					t.Fatalf("no error: %+v", c.frames)
				}
				return
			}
			wantResult(tc.result)(t, c)
		})
	}
	waitWarmEnded(t, p, dir) // it ends at its first import: the cell's random is in (TestWarmUpLeavesCellsModulesIn)
	wantResult("('local mymod', 'local random')")(t, p.runReq(map[string]any{
		"code": "import importlib\n(importlib.reload(mymod).VALUE, importlib.reload(random).VALUE)", "cwd": dir}))
	if err := os.WriteFile(filepath.Join(dir, "late.py"), []byte("VALUE = 'late'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantResult("'late'")(t, p.runReq(map[string]any{"code": "import late\nlate.VALUE", "cwd": dir}))
}

// TestCellLazyImportsStayLazy: 3.15's lazy imports, which the runner's own
// imports make at once (a filter while they run), stay lazy for a cell,
// even in a thread of its own while the runner's imports run in another
// (an exception's __str__ runs while its traceback is formatted), and the
// cell's own filter is asked for them, and is what it set after.
func TestCellLazyImportsStayLazy(t *testing.T) {
	if !testkit.PythonAtLeast(t, 3, 15) {
		t.Skip("lazy imports are 3.15+'s")
	}
	dir := t.TempDir()
	writeFile(t, dir, "lazymod.py", "VALUE = 'local lazy'\n")
	p := start(t, startOpts{})
	for _, tc := range []struct {
		name, code, result string
	}{
		{"the cell's filter", "import sys\nasked = []\n" +
			"def mine(importer, name, fromlist=None):\n    asked.append(name)\n    return True\n" +
			"sys.set_lazy_imports_filter(mine)", ""},
		{"a thread's lazy import while a traceback is formatted",
			"import threading\ng, lazy = {}, []\n" +
				"def imp():\n    exec('lazy import lazymod', g)\n    lazy.append('lazymod' not in sys.modules)\n" +
				"class E(Exception):\n    def __str__(self):\n" +
				"        t = threading.Thread(target=imp)\n        t.start(); t.join()\n        return 'e'\nraise E()", "error"},
		{"what the thread got", "exec('v = lazymod.VALUE', g)\n(lazy, asked, g['v'], sys.get_lazy_imports_filter() is mine)",
			"([True], ['lazymod'], 'local lazy', True)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(map[string]any{"code": tc.code, "cwd": dir})
			switch tc.result {
			case "error":
				if _, ok := c.first(frames.TypeError); !ok {
					t.Fatalf("no error: %+v", c.frames)
				}
			case "":
				if c.done().Status != frames.StatusOK {
					t.Fatalf("done %+v", c.done())
				}
			default:
				wantResult(tc.result)(t, c)
			}
		})
	}
}

// TestRunnerImportsGoThroughOwn keeps every later import of the runner's
// Python going through core's _own (or imports.py): an import statement may
// name only a module built into every CPython, which no path can shadow,
// or one the interpreter or core has imported before the cwd joins
// sys.path. Names given to __import__ or importlib.import_module are
// checked by hand where they are: a user's module (%load_ext, %aimport),
// a built-in one (stdio at start-up), or a plain import outside the runner
// (prelude in a gateway kernel, the rewriter alone).
func TestRunnerImportsGoThroughOwn(t *testing.T) {
	allowed := map[string]bool{
		// built into every CPython: no path is searched for them
		"sys": true, "builtins": true, "_thread": true, "_signal": true, "_warnings": true,
		"_imp": true, "marshal": true, "gc": true, "atexit": true, "_ast": true,
		// imported as the interpreter starts, or by core as it loads (sys.path[0]
		// is then the runner's own directory)
		"io": true, "os": true, "_json": true, "_frozen_importlib_external": true,
	}
	dynamic := map[string]int{"ipy_magics.py": 2, "stdio.py": 1, "prelude.py": 1, "imports.py": 1, "ipy_rewrite.py": 1}
	stmt := regexp.MustCompile(`(?m)^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import)`)
	call := regexp.MustCompile(`__import__\b|import_module\(`)
	files, err := filepath.Glob("*.py")
	if err != nil || len(files) == 0 {
		t.Fatalf("no runner files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range stmt.FindAllStringSubmatch(string(b), -1) {
			for _, name := range strings.Split(m[1]+m[2], ",") {
				if name = strings.TrimSpace(name); !allowed[name] {
					t.Errorf("%s: %q imports %s from sys.path (the cwd first): use _core._own(%q)", f, strings.TrimSpace(m[0]), name, name)
				}
			}
		}
		if n := len(call.FindAllString(string(b), -1)); n != dynamic[f] {
			t.Errorf("%s: %d uses of __import__/import_module, %d checked: is the new one the runner's own import (_own)?", f, n, dynamic[f])
		}
	}
}

// TestReportHooksAreTheDefaults: the runner's hooks for the errors the
// interpreter reports itself are the defaults, by their original names
// too, whether threading was imported as the interpreter started (site and
// a .pth file may do that) or by the cell; a cell's own hook replaces them.
func TestReportHooksAreTheDefaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pyArgs []string
	}{{"site", nil}, {"no site", []string{"-S"}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{pyArgs: tc.pyArgs})
			wantResult("(True, True, True, True)")(t, p.run("import sys, threading\n"+
				"(sys.excepthook is sys.__excepthook__, sys.unraisablehook is sys.__unraisablehook__,\n"+
				" threading.excepthook is getattr(threading, '__excepthook__', threading.excepthook),  # 3.10+\n"+
				" threading.excepthook.__module__ != '_thread')"))
			c := p.run("threading.excepthook = lambda args: print('mine', args.exc_type.__name__)\n" +
				"t = threading.Thread(target=lambda: 1 / 0)\nt.start()\nt.join()")
			if c.stdout != "mine ZeroDivisionError\n" || c.stderr != "" {
				t.Errorf("stdout %q, stderr %q", c.stdout, c.stderr)
			}
		})
	}
}

// TestOwnImportsProbeAsPython: importlib.util.find_spec of a module that
// is nowhere says None under the runner's own imports, as in python3
// (IPython 9 probes for argcomplete as it starts: full mode failed with
// ModuleNotFoundError where it is not installed). One that only the cwd
// holds is still refused, as an import of it is, and runs nothing.
func TestOwnImportsProbeAsPython(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "evalhost_planted.py", "raise SystemExit('planted module ran')\n")
	p := start(t, startOpts{dir: dir})
	wantOK(t, p.run("import sys, importlib.util\nimports = sys.modules['_evalhost_runner']._imports()\n"+
		"def own(fn, name):\n    try:\n        return repr(imports.call(fn, name))\n    except ImportError as e:\n        return type(e).__name__"))
	for _, tc := range []struct{ name, code, want string }{
		{"a probe of a module nowhere", "own(importlib.util.find_spec, 'evalhost_no_such_module')", "'None'"},
		{"an import of it", "own(__import__, 'evalhost_no_such_module')", "'ModuleNotFoundError'"},
		{"a cell's own probe finds the cwd's module", "importlib.util.find_spec('evalhost_planted') is not None", "True"},
		{"a probe of a module only the cwd holds", "own(importlib.util.find_spec, 'evalhost_planted')", "'ModuleNotFoundError'"},
		{"an import of it", "own(__import__, 'evalhost_planted')", "'ModuleNotFoundError'"},
		{"a probe of an installed module", "own(importlib.util.find_spec, 'json').startswith(\"ModuleSpec(name='json'\")", "True"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantResult(tc.want)(t, p.run(tc.code)) })
	}
}

// TestCellModuleOfAStartUpName: a cell that imported its own html.py (from
// the cwd) keeps it, and the runner's own imports still get the stdlib's:
// IPython 9 imports stack_data (`from html import escape`) at its first
// traceback, which found the cell's html in sys.modules and failed
// ("Unexpected exception formatting exception" on stdout, no error frame).
// IPython 8 imported the stdlib's html as it started, so its cells get that.
func TestCellModuleOfAStartUpName(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "html.py", "MINE = True\n")
	inBothModesWith(t, func(*testing.T) startOpts { return startOpts{dir: dir} }, func(t *testing.T, p *proc) {
		wantOK(t, p.run("import html, sys\nfirst = html\nipython8 = 'IPython' in sys.modules and sys.modules['IPython'].version_info < (9,)"))
		for i := 0; i < 2; i++ { // the second error: the runner's own html is kept, the cell's put back again
			c := p.run("1/0")
			wantError(t, c, "ZeroDivisionError")
			if c.stdout != "" || c.stderr != "" {
				t.Errorf("error %d: stdout %q, stderr %q", i+1, c.stdout, c.stderr)
			}
			wantResult("True")(t, p.run("import html\nhtml is first is sys.modules['html'] and (ipython8 or html.MINE)"))
		}
	})
}

// TestCellModuleOfAStartUpNameTwoThreads: two threads in the runner's own
// imports at once (a cell thread's traceback formatted while the main
// thread formats one), the first out before the second. The second took
// the runner's html, already lent, for the cell's, and put it back last:
// the cell's html was gone from sys.modules and kept as the runner's own,
// where the next traceback's stack_data found it again.
func TestCellModuleOfAStartUpNameTwoThreads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "html.py", "MINE = True\n")
	p := start(t, startOpts{dir: dir})
	wantOK(t, p.run("import html, sys, threading\nimports = sys.modules['_evalhost_runner']._imports()\n"+
		"inside, out = threading.Event(), threading.Event()\n"+
		"t = threading.Thread(target=imports.call, args=(lambda: (inside.set(), out.wait()),))\n"+
		"imports.call(lambda: (t.start(), inside.wait()))\nout.set()\nt.join()"))
	wantResult("(True, False)")(t, p.run("(sys.modules['html'] is html, hasattr(imports.call(lambda: __import__('html')), 'MINE'))"))
}

// TestCellModuleOfAStartUpNameLetGo: a cell's module that the cell took
// out of sys.modules is not kept alive by the runner's note of it.
func TestCellModuleOfAStartUpNameLetGo(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "html.py", "MINE = True\n")
	p := start(t, startOpts{dir: dir})
	wantOK(t, p.run("import html, sys, weakref, gc\nimports = sys.modules['_evalhost_runner']._imports()\n"+
		"imports.call(lambda: None)\nref = weakref.ref(html)\ndel sys.modules['html'], html\nimport json\nimports.call(lambda: None)\ngc.collect()"))
	wantResult("True")(t, p.run("ref() is None"))
}
