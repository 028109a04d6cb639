package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestTreelessCompile: a runner's first cells are compiled without the
// syntax-tree types (cells._treeless_cell), each case in a fresh runner; it
// must show the same result, error and line numbers as compile() would, and
// hand to compile() what it cannot be sure of.
func TestTreelessCompile(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		treeless   bool
		result     string // the result's text/plain, "" for none
		ename      string // the error's name, "" for none
		traceback  []string
		stderr     string
	}{
		{name: "statement", code: "pass", treeless: true},
		{name: "last expression", code: "x = 1\nx + 1", treeless: true, result: "2"},
		{name: "expression with a comment after", code: "x = 1\nx  # note\n\n# end", treeless: true, result: "1"},
		{name: "last statement indented block", code: "for i in range(2):\n    i", treeless: true},
		{name: "expression over lines", code: "f = max\nf(\n    1,\n    2)", treeless: true, result: "2"},
		{name: "string over lines before it", code: "s = '''\nabc\n'''\ns", treeless: true, result: `'\nabc\n'`},
		{name: "error lines in the cell", code: "def f():\n    return 1/0\nf()", treeless: true, ename: "ZeroDivisionError",
			traceback: []string{`File "<cell 1>", line 3`, `File "<cell 1>", line 2, in f`}},
		{name: "error lines in the last expression", code: "x = 2\n\n(lambda: 1/0)()", treeless: true, ename: "ZeroDivisionError",
			traceback: []string{`File "<cell 1>", line 3, in <lambda>`}},
		{name: "bracket at column 0 goes to compile", code: "y = 0\n[\n1,\n2]", result: "[1, 2]"},
		{name: "quiet semicolon goes to compile", code: "x = 1\nx;"},
		{name: "syntax error goes to compile", code: "x = 1\n1 +", ename: "SyntaxError", traceback: []string{`File "<cell 1>", line 2`}},
		{name: "compile-time warning goes to compile", code: "1 is 1", result: "True", stderr: "<cell 1>:1: SyntaxWarning"},
		{name: "top-level await goes to compile", code: "await __import__('asyncio').sleep(0, 5)", result: "5"},
		{name: "future import goes to compile", code: "from __future__ import annotations\nx: undefined_name = 1"},
		// A starred item makes an expression statement that is no eval input.
		{name: "starred last expression", code: "a = [1]\n*a, 2", treeless: true, result: "(1, 2)"},
		{name: "starred assignment shows nothing", code: "a = [1]\n*b, c = a + [2]", treeless: true},
		{name: "starred one line as compile() tries it", code: "*[1], 2", treeless: true},
		// A form feed resets the column: the line is a statement at column 0.
		{name: "form feed goes to compile", code: "x = 1\n\fx", result: "1"},
		{name: "syntax error after a starred statement", code: "a = [1]\n*a, 2 +", ename: "SyntaxError", traceback: []string{`File "<cell 1>", line 2`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// -S: site loads nothing that calls compile() first (this machine's does)
			p := start(t, startOpts{first: tc.code, pyArgs: []string{"-S"}})
			c := p.collect("c1", nil)
			if tc.result != "" {
				wantResult(tc.result)(t, c)
			} else {
				wantNo(frames.TypeResult)(t, c)
			}
			if tc.ename != "" {
				tb := strings.Join(wantError(t, c, tc.ename).Traceback, "\n")
				for _, want := range tc.traceback {
					if !strings.Contains(tb, want) {
						t.Errorf("traceback lacks %q:\n%s", want, tb)
					}
				}
			} else if d := c.done(); d.Status != "ok" {
				t.Errorf("done %+v", d)
			}
			if !strings.Contains(c.stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", c.stderr, tc.stderr)
			}
			// The count includes the check itself when it too went treeless.
			n := text(t, wantResultFrame(t, p.run("__import__('sys').modules['_evalhost_cells']._treeless_cells")).Bundle, "text/plain")
			if got := n != "0"; got != tc.treeless {
				t.Errorf("compiled without syntax trees: %v (%s cells), want %v", got, n, tc.treeless)
			}
		})
	}
}

// TestTreelessCompileAfterStartup: what start-up code (here an extension
// module; a sitecustomize alike) set up before the first cell, the one
// compiled by cells._treeless_cell.
func TestTreelessCompileAfterStartup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		module string // the extension module run at start-up, "" for none
		first  string
		check  func(t *testing.T, p *proc, c cellResult)
	}{
		{
			// Nested deeper than Python calls may go (renaming its code objects
			// recursed), though not than compile() may (3.8's parser may not).
			name:  "code nested deeper than the recursion limit",
			first: "f = " + strings.Repeat("lambda: ", 950) + "0\n1",
			check: func(t *testing.T, p *proc, c cellResult) {
				if e, ok := c.first(frames.TypeError); ok && e.Ename == "MemoryError" {
					t.Skip("this Python's parser cannot nest that deep")
				}
				wantResult("1")(t, c)
			},
		},
		{
			// An audit hook that refuses sys.settrace: compile() needs none, and
			// the warning filter must not stay behind.
			name:   "audit hook refuses sys.settrace",
			module: "import sys\ndef hook(event, args):\n    if event == 'sys.settrace':\n        raise RuntimeError('no tracing')\nsys.addaudithook(hook)\n",
			first:  "x = 1\nx + 1",
			check: func(t *testing.T, p *proc, c cellResult) {
				wantResult("2")(t, c)
				c = p.run("import _warnings\nimport warnings\nwarnings.warn('after')\n(sys.gettrace(), [f for f in _warnings.filters if f[0] == 'error'])")
				wantResult("(None, [])")(t, c)
				if !strings.Contains(c.stderr, "UserWarning: after") {
					t.Errorf("stderr %q lacks the warning", c.stderr)
				}
			},
		},
		{
			// An audit hook that refuses exec of "<string>" code (code compiled
			// from a string): compile() does without it.
			name:   "audit hook refuses exec of strings",
			module: "import sys\ndef hook(event, args):\n    if event == 'exec' and getattr(args[0], 'co_filename', '') == '<string>':\n        raise PermissionError('no exec of strings')\nsys.addaudithook(hook)\n",
			first:  "x = 1\nx + 1",
			check:  func(t *testing.T, p *proc, c cellResult) { wantResult("2")(t, c) },
		},
		{
			// warnings.filters replaced: the list the warnings machinery reads
			// is that one, not _warnings.filters.
			name:   "warnings.filters replaced",
			module: "import warnings\nwarnings.filters = list(warnings.filters)\n",
			first:  "x = 1\ny = x is 1\ny",
			check: func(t *testing.T, p *proc, c cellResult) {
				wantResult("True")(t, c)
				if !strings.Contains(c.stderr, "<cell 1>:2: SyntaxWarning") || strings.Contains(c.stderr, "<string>") {
					t.Errorf("stderr %q, want the warning once, of <cell 1>", c.stderr)
				}
			},
		},
		{
			// Inside a profiler's callback the trace sees no calls: exec must
			// not be left to run the code there (the run_cell here is the
			// runner's first compile).
			name: "run_cell from a profile function",
			module: "import sys\n" +
				"def prof(frame, event, arg):\n    if event == 'call' and frame.f_code.co_name == 'marker':\n" +
				"        get_ipython().run_cell(\"__import__('sys').ran = getattr(__import__('sys'), 'ran', 0) + 1\\n1\", silent=True)\n" +
				"def marker():\n    pass\nsys.setprofile(prof)\nmarker()\nsys.setprofile(None)\n",
			first: "import sys\nsys.ran",
			check: func(t *testing.T, p *proc, c cellResult) { wantResult("1")(t, c) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := startOpts{first: tc.first, pyArgs: []string{"-S"}}
			if tc.module != "" {
				dir := t.TempDir()
				writeFile(t, dir, "setup.py", tc.module)
				o.modules = []string{dir}
			}
			p := start(t, o)
			for _, f := range p.early {
				if f.Type == frames.TypeWarning {
					t.Fatalf("start-up: %s", f.Message)
				}
			}
			tc.check(t, p, p.collect("c1", nil))
		})
	}
}
