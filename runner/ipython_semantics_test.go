package runner

import (
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestIPythonSemantics pins behaviour where a user of IPython/Jupyter expects
// what IPython does. The cases share one runner, in order, starting fresh
// (the linecache case needs cells run before linecache was imported).
func TestIPythonSemantics(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "chdir_target_mod.py", "V = 'found after chdir'\n")
	p := start(t, startOpts{})
	for _, tc := range []struct {
		name   string
		code   string
		status string
		stdout string
		check  func(t *testing.T, c cellResult)
	}{
		{name: "a function defined before linecache is imported",
			code: "def cell_fn(x):\n    return x + 1\n"},
		{name: "traceback.print_exc shows lines of earlier cells",
			code: "import traceback\ntry:\n    cell_fn(None)\nexcept TypeError:\n    traceback.print_exc()",
			check: func(t *testing.T, c cellResult) {
				if !strings.Contains(c.stderr, "return x + 1") {
					t.Errorf("stderr lacks the cell line:\n%s", c.stderr)
				}
			}},
		{name: "inspect.getsource finds a function of an earlier cell",
			code:  "import inspect\ninspect.getsource(cell_fn)",
			check: wantResult(`'def cell_fn(x):\n    return x + 1\n'`)},
		{name: "a ';' before a trailing comment silences the result", code: "1; # hidden",
			check: wantNo(frames.TypeResult)},
		{name: "a ';' before trailing comment lines silences the result", code: "x = 2\nx;\n\n# the end\n",
			check: wantNo(frames.TypeResult)},
		{name: "a ';' inside a trailing comment does not silence", code: "1  # shown;",
			check: wantResult("1")},
		{name: "a ';' in the last string does not silence", code: "'a;'", check: wantResult("'a;'")},
		{name: "_ipython_display_ of the last value shows the object its way",
			code:   "class Shows:\n    def _ipython_display_(self):\n        print('shown by itself')\nShows()",
			stdout: "shown by itself\n",
			check: func(t *testing.T, c cellResult) {
				wantNo(frames.TypeResult)(t, c)
			}},
		{name: "a value shown by _ipython_display_ is still stored as _", code: "type(_).__name__",
			check: wantResult("'Shows'")},
		{name: "display of a mock shows its repr, not the mock's _ipython_display_",
			code: "from unittest.mock import MagicMock\ndisplay(MagicMock(name='m'))",
			check: func(t *testing.T, c cellResult) {
				d, ok := c.first(frames.TypeDisplay)
				if !ok {
					t.Fatalf("no display frame: %+v", c.frames)
				}
				if got := keys(d.Bundle); len(got) != 1 || !strings.HasPrefix(text(t, d.Bundle, "text/plain"), "<MagicMock name='m'") {
					t.Errorf("bundle %v", d.Bundle)
				}
			}},
		{name: "an object answering every attribute gets text/plain only",
			code: "class Any:\n    def __getattr__(self, n): return lambda *a, **k: 'x'\n    def __repr__(self): return 'Any()'\nAny()",
			check: func(t *testing.T, c cellResult) {
				r := wantResultFrame(t, c)
				if got := keys(r.Bundle); len(got) != 1 || text(t, r.Bundle, "text/plain") != "Any()" {
					t.Errorf("bundle %v", r.Bundle)
				}
			}},
		{name: "display of a class with display methods shows the class", code: "display(Shows)",
			check: func(t *testing.T, c cellResult) {
				d, ok := c.first(frames.TypeDisplay)
				if !ok || text(t, d.Bundle, "text/plain") != "<class '__main__.Shows'>" {
					t.Errorf("display %+v", d)
				}
			}},
		{name: "getpass fails at once instead of reading the terminal", status: "error",
			code: "import getpass\ngetpass.getpass('pw: ')",
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "StdinNotImplementedError")
				if !strings.Contains(e.Evalue, "getpass") {
					t.Errorf("evalue %q", e.Evalue)
				}
				if in, ok := c.first(frames.TypeInput); !ok || in.Prompt != "pw: " {
					t.Errorf("input frame %+v", in)
				}
				if c.stderr != "" {
					t.Errorf("stderr %q", c.stderr)
				}
			}},
		{name: "a __future__ import", code: "from __future__ import annotations"},
		{name: "a __future__ import lasts for later cells",
			code: "def ann(x: Undefined) -> Nope: pass\nann.__annotations__", check: wantResult("{'x': 'Undefined', 'return': 'Nope'}")},
		{name: "after os.chdir, modules of the new directory import",
			code:  "import os\nos.chdir(" + strconv.Quote(dir) + ")\nimport chdir_target_mod\nchdir_target_mod.V",
			check: wantResult("'found after chdir'")},
		{name: "an error in a %time statement shows the statement with its own columns", status: "error",
			code: "%time 1/0",
			check: func(t *testing.T, c cellResult) {
				tb := wantError(t, c, "ZeroDivisionError").Traceback
				joined := strings.Join(tb, "\n")
				want := "\n    1/0\n"
				if testkit.PythonAtLeast(t, 3, 11) {
					want += "    ~^~" // the columns, since 3.11
				}
				if strings.Count(joined, "%time 1/0") != 1 || !strings.Contains(joined, want) {
					t.Errorf("traceback:\n%s", joined)
				}
			}},
		{name: "%time counts CPU time finer than clock ticks",
			code: "%time sum(range(50000))",
			check: func(t *testing.T, c cellResult) {
				if !strings.HasPrefix(c.stdout, "CPU times: user ") || strings.Contains(c.stdout, "total: 0 ns") {
					t.Errorf("%%time output %q", c.stdout)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			want := tc.status
			if want == "" {
				want = frames.StatusOK
			}
			if d := c.done(); d.Status != want {
				e, _ := c.first(frames.TypeError)
				t.Fatalf("done %+v, want %s; error %s: %s\n%s", d, want, e.Ename, e.Evalue, strings.Join(e.Traceback, "\n"))
			}
			if tc.stdout != "" && c.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// An interrupt that lands while the event loop waits for a top-level await
// shows where the cell was waiting, not only asyncio's selector.
func TestInterruptDuringAwaitShowsTheCell(t *testing.T) {
	p := start(t, startOpts{})
	p.send(map[string]any{"id": "a", "code": "import asyncio\nasync def nap():\n    await asyncio.sleep(30)\n" +
		"print('waiting', flush=True)\nawait nap()"})
	c := p.collect("a", func(f frames.Frame) {
		if f.Type == frames.TypeStarted {
			p.out.waitFor(t, "waiting\n")
			awaitLoopWait(t, p) // in the cell's print, it would rightly show line 4
			p.interrupt()
		}
	})
	if d := c.done(); d.Status != frames.StatusError || !d.Cancelled {
		t.Errorf("done %+v, want error and cancelled", d)
	}
	tb := strings.Join(wantError(t, c, "KeyboardInterrupt").Traceback, "\n")
	if !strings.Contains(tb, `File "<cell 1>", line 5, in <module>`) {
		t.Errorf("traceback lacks the cell's await:\n%s", tb)
	}
	wantResult("2")(t, p.run("await asyncio.sleep(0)\n1 + 1"))
}

// A warning shows once per place per cell, as in IPython (8 and 9 alike):
// its shell empties the user namespace's __warningregistry__ before every
// cell (and every run_cell), so a later cell's warning on the same line is
// not taken for the earlier one, while one cell repeating it shows it once.
// The runner and full IPython mode, one runner each, cells in order.
func TestWarningsShowOncePerCell(t *testing.T) {
	cells := []struct {
		name, code, warning string
		shown               int // how many times the cell's stderr carries the warning
	}{
		{"first cell", "import warnings\nwarnings.warn('x')", "UserWarning: x", 1},
		{"same warning on the same line of the next cell", "import warnings\nwarnings.warn('x')", "UserWarning: x", 1},
		{"repeated in one cell", "for i in range(3):\n    warnings.warn('y')", "UserWarning: y", 1},
		{"from a function, twice in its cell", "def f():\n    warnings.warn('z')\nf()\nf()", "UserWarning: z", 1},
		{"from the function again in a later cell", "f()", "UserWarning: z", 1},
		{"in a cell and the run_cell it calls", "warnings.warn('w'); get_ipython().run_cell(\"warnings.warn('w')\");", "UserWarning: w", 2},
	}
	inBothModes(t, func(t *testing.T, p *proc) {
		for _, tc := range cells {
			t.Run(tc.name, func(t *testing.T) {
				c := p.run(tc.code)
				wantOK(t, c)
				if n := strings.Count(c.stderr, tc.warning); n != tc.shown {
					t.Errorf("%q shown %d times, want %d; stderr:\n%s", tc.warning, n, tc.shown, c.stderr)
				}
			})
		}
	})
}
