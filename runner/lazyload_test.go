package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestFeaturesLoadOnlyTheirModules: each IPython feature loads its own
// runner modules and no other, so a `!ls` cell no longer pays for magics,
// get_ipython, the IPython.display shim and full IPython mode (before the
// split it loaded all of them: one 1.7k-line ipy.py).
func TestFeaturesLoadOnlyTheirModules(t *testing.T) {
	for _, tc := range []struct {
		name, cell string
		want       []string // the _evalhost_ modules the cell loads
	}{
		{"plain cell", "x = 1 % 2", nil},
		{"shell escape", "!ls > /dev/null", []string{"ipy_rewrite", "ipy_system"}},
		{"captured shell escape", "files = !ls", []string{"ipy_rewrite", "ipy_system"}},
		{"line magic", "%pwd", []string{"ipy_magics", "ipy_rewrite", "ipy_system"}},
		{"capture cell magic", "%%capture out\nprint(1)", []string{"ipy_capture", "ipy_magics", "ipy_rewrite", "ipy_system"}},
		{"get_ipython", "shell = get_ipython()", []string{"ipy_shell"}},
		// display itself: a plain value's result (the warm-up's 1) no longer loads it
		{"IPython.display", "from IPython.display import HTML", []string{"display", "ipy_display"}},
		{"rich result", "class R:\n    def _repr_html_(self): return '<b>r</b>'\nR()", []string{"display"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{pyArgs: []string{"-S"}}) // -S: the shim, whether or not IPython is installed
			wantResult("1")(t, p.run("1"))                   // the modules every cell with a plain result loads
			if d := p.run("import sys\n_before = set(sys.modules)").done(); d.Status != "ok" {
				t.Fatalf("snapshot: done %+v", d)
			}
			if d := p.run(tc.cell).done(); d.Status != "ok" {
				t.Fatalf("cell %q: done %+v", tc.cell, d)
			}
			c := p.run("sorted(set(sys.modules) - _before)")
			r, ok := c.first(frames.TypeResult)
			if !ok {
				t.Fatalf("no result: %+v", c.frames)
			}
			loaded := strings.Trim(text(t, r.Bundle, "text/plain"), "[]")
			var ours []string
			for _, m := range strings.Split(loaded, ", ") {
				// imports (the runner's own imports) loads with the first of them, any
				// feature's; warm (and hints, cprint: 3.10-3.12) with the warm-up, when the
				// runner idled meanwhile
				if m = strings.Trim(m, "'"); strings.HasPrefix(m, "_evalhost_") && !slices.Contains(warmModules, m) {
					ours = append(ours, strings.TrimPrefix(m, "_evalhost_"))
				}
			}
			if !slices.Equal(ours, tc.want) {
				t.Errorf("cell %q loaded runner modules %v, want %v", tc.cell, ours, tc.want)
			}
			t.Logf("%s loads: %s", tc.name, loaded)
		})
	}
}

// warmModules are the runner modules that are loaded as the warm-up runs or
// by it (warm.py), or by the first of the runner's own imports (imports).
var warmModules = []string{"_evalhost_imports", "_evalhost_warm", "_evalhost_hints", "_evalhost_cprint"}

// TestSubprocessPatchedOnImport: start-up does not load the _posixsubprocess
// extension (~0.13 ms of every start); subprocess's fork_exec is made to
// flush first as the extension is imported.
func TestSubprocessPatchedOnImport(t *testing.T) {
	p := start(t, startOpts{})
	wantResult("False")(t, p.run("import sys\n'_posixsubprocess' in sys.modules and '_posixsubprocess' not in sys.builtin_module_names"))
	wantResult("True")(t, p.run("import subprocess\nhasattr(sys.modules['_posixsubprocess'].fork_exec, '__wrapped__')"))
	if c := p.run("print('a')\nsubprocess.run(['echo', 'sub'])\nprint('b')"); c.stdout != "a\nsub\nb\n" {
		t.Errorf("stdout %q, want the print before the child's output", c.stdout)
	}
}

// TestStartLoadsNoHeavyModules: a one-shot `run -c pass` (or `x = 1`, `import
// os`) needs neither threading (it and what it imports were ~9 ms of a 24 ms
// interpreter's start here: the tool bridge made its per-thread state with
// it) nor _ast (the syntax tree's module; TestTreelessCompile holds that the
// types are not even built), nor the warm-up's module.
func TestStartLoadsNoHeavyModules(t *testing.T) {
	// The expression cell names what is loaded, plus the warm-up's module and
	// its traceback: the warm-up loads warm.py after 50 ms idle and imports
	// ast, so a loaded machine can make one try inconclusive, never a false
	// pass; a warm.py loaded before then makes every try so.
	const check = "sorted(__import__('sys').modules.keys() & {'threading', '_ast', 'functools', 'traceback', '_evalhost_warm'})"
	for try := 0; try < 5; try++ {
		// -S: this machine's site imports threading itself (a .pth loading certifi)
		p := start(t, startOpts{first: "pass", pyArgs: []string{"-S"}})
		if d := p.collect("c1", nil).done(); d.Status != "ok" {
			t.Fatalf("pass: done %+v", d)
		}
		for _, stmt := range []string{"x = 1", "import os", "y: int = x + 1", "for i in range(2): i"} {
			c := p.run(stmt)
			if d := c.done(); d.Status != "ok" {
				t.Fatalf("%q: done %+v", stmt, d)
			}
			wantNo(frames.TypeResult)(t, c)
		}
		got := text(t, wantResultFrame(t, p.run(check)).Bundle, "text/plain")
		if strings.Contains(got, "traceback") || strings.Contains(got, "_evalhost_warm") {
			t.Logf("try %d: the warm-up ran before the check (%s); again", try, got)
			p.close()
			continue
		}
		if got != "[]" {
			t.Fatalf("start-up and one-line statements loaded %s, want none of them", got)
		}
		return
	}
	t.Fatal("the warm-up ran before the check in every try: does it wait for 50 ms idle before it loads warm.py?")
}

// loadGate is cell code that pauses the runner's first load of display:
// its loader (core._loader) hands out code that sets `entered`, waits for
// `go` and then runs display.py's own. Thread a starts that load
// (show('a') calls display); `loads` counts the runs of display.py.
const loadGate = `import os, sys, threading
core = sys.modules['_evalhost_runner']
real_loader, entered, go, loads, errors, parent = core._loader, threading.Event(), threading.Event(), [], [], os.getpid()
def gated(here, name):
    path, code = real_loader(here, name)
    if name != 'display' or os.getpid() != parent:
        return path, code
    loads.append(name)
    def run(g):
        entered.set()
        go.wait()
        exec(code, g)
    core._evh_gate = run
    return path, compile('_core._evh_gate(globals())', path, 'exec')
def show(x):
    try:
        display(x)
    except Exception as e:
        errors.append(repr(e))
    finally:
        go.set()
core._loader = gated
a = threading.Thread(target=show, args=('a',))
a.start()
entered.wait()
`

// TestModuleLoadsOnceForAllThreads: a runner module (core's _module) is
// handed to another thread only once its code has run: a second thread
// that asks while the first is still loading it waits (before, it got the
// half-run module: display had no attribute display), and a child forked
// meanwhile loads it afresh rather than waiting for a thread it does not
// have.
func TestModuleLoadsOnceForAllThreads(t *testing.T) {
	for _, tc := range []struct {
		name, code, result string
		displays           int
	}{
		// The lock is spied on: the second thread's wait for it lets the first
		// go on. Without a lock (before) the second got the module at once,
		// and its own end lets the first go on.
		{name: "a second thread", displays: 2, result: "([], ['display'])", code: `second = []
class Spy:
    def __init__(self, lock):
        self.lock = lock
    def __enter__(self):
        if threading.get_ident() in second:
            go.set()
        return self.lock.__enter__()
    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)
lock = getattr(core, '_module_lock', None)
if lock is not None:
    core._module_lock = Spy(lock)
def b_show():
    second.append(threading.get_ident())
    show('b')
b = threading.Thread(target=b_show)
b.start()
a.join()
b.join()
core._loader, core._module_lock = real_loader, lock
(errors, loads)`},
		{name: "a forked child", displays: 1, result: "(0, [], ['display'])", code: `pid = os.fork()
if pid == 0:
    os._exit(0 if hasattr(core._module('display'), 'display') else 1)
status = os.waitpid(pid, 0)[1]
go.set()
a.join()
core._loader = real_loader
(os.WEXITSTATUS(status), errors, loads)`},
		// The import system asks for the runner's own imports (imports.py)
		// on a first import of tracemalloc (as python3.14's fork does of
		// warnings, to warn of the threads): it waited for the lock thread a
		// held, and a waited for this thread: both hung.
		// (Where thread a's load itself loaded imports.py, as on python3.13
		// in a venv, there is no such wait to show: the row skips.)
		{name: "a first own import meanwhile", displays: 1, result: "([], ['display'])", code: `loaded = '_evalhost_imports' in sys.modules
import tracemalloc
go.set()
a.join()
core._loader = real_loader
'imports.py was loaded before the import' if loaded else (errors, loads)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{})
			c := p.run(loadGate + tc.code)
			if got := text(t, wantResultFrame(t, c).Bundle, "text/plain"); strings.Contains(got, "was loaded before") {
				t.Skip(got)
			}
			wantResult(tc.result)(t, c)
			if ds := displays(c); len(ds) != tc.displays {
				t.Errorf("%d displays, want %d: %+v", len(ds), tc.displays, ds)
			}
		})
	}
}
