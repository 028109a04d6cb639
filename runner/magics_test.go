package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// wantStdout checks a cell succeeded and printed exactly out.
func wantOK(t *testing.T, c cellResult) {
	t.Helper()
	if c.done().Status != "ok" {
		e, _ := c.first(frames.TypeError)
		t.Fatalf("cell failed: %s: %s\n%s\nstderr %q", e.Ename, e.Evalue, strings.Join(e.Traceback, "\n"), c.stderr)
	}
}

// The rewriter must leave Python that merely contains '%' or '!' alone.
func TestMagicRewriterLeavesPythonAlone(t *testing.T) {
	p := start(t, startOpts{})
	for _, tc := range []struct{ name, code, want string }{
		{"modulo", "a, b = 7, 3\na % b", "1"},
		{"modulo at a continuation line", "a = 7\n(a\n % 4)", "3"},
		{"backslash continuation", "a = 9\nb = a \\\n% 5\nb", "4"},
		{"percent formatting", `x = 5
"%s items" % x`, "'5 items'"},
		{"not equal", "x, y = 1, 2\nx != y", "True"},
		{"magic inside a string", `s = """
%time this is text
!ls neither
x = !nope
"""
s.count("%") + s.count("!")`, "3"},
		{"magic inside an f-string", `n = 2
f"""{n}
%timeit {n}
!echo {n}"""`, "'2\\n%timeit 2\\n!echo 2'"},
		{"percent-assign operator", "z = 10\nz %= 4\nz", "2"},
		{"dict with modulo", "d = {'a': 10 % 3}\nd", "{'a': 1}"},
		{"question marks in strings and comments", "s = 'len?'\n# len?\nt = \"\"\"\nlen?\n?len\n\"\"\"\ns + t", "'len?\\nlen?\\n?len\\n'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			wantOK(t, c)
			wantResult(tc.want)(t, c)
		})
	}
}

func TestShellEscapes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "x")
	writeFile(t, dir, "b.txt", "y")
	p := start(t, startOpts{dir: dir})
	for _, tc := range []struct {
		name, code, stdout, result string
	}{
		{name: "bang", code: "!echo hello", stdout: "hello\n"},
		{name: "bang with python print order", code: "print('a')\n!echo b\nprint('c')", stdout: "a\nb\nc\n"},
		{name: "assignment gives an SList", code: "files = !ls *.txt\nfiles", result: "['a.txt', 'b.txt']"},
		{name: "SList .s .n .l", code: "(files.s, files.n, type(files.l).__name__)", result: "('a.txt b.txt', 'a.txt\\nb.txt', 'list')"},
		{name: "stderr merged into captured lines", code: "out = !echo e 1>&2\nout", result: "['e']"},
		{name: "indented in a loop with {var} expansion", code: "for i in range(3):\n    !echo n{i}\n", stdout: "n0\nn1\nn2\n"},
		{name: "$name expansion, unknown $VAR left to the shell", code: "who = 'me'\n!echo $who $HOME_NOT_SET_X end", stdout: "me end\n"},
		{name: "awk braces pass through", code: "!echo 1 2 | awk '{print $2}'", stdout: "2\n"},
		{name: "exit code", code: "!exit 3\n_exit_code", result: "3"},
		{name: "double bang returns lines", code: "!!echo x", result: "['x']"},
		{name: "bang inside a function sees locals", code: "def f(word):\n    out = !echo {word}\n    return out\nf('local')", result: "['local']"},
		{name: "x = %magic", code: "here = %pwd\nhere == __import__('os').getcwd()", result: "True"},
		// As IPython's assemble_continued_line: each backslash and newline a space.
		{name: "backslash continues a bang", code: "!echo one \\\n  two\nprint('three')", stdout: "one two\nthree\n"},
		{name: "backslash continues x = !cmd", code: "out = !echo a \\\n b \\\n c\nout", result: "['a b c']"},
		{name: "backslash continues a magic", code: "%set_env EVH_CONT \\\n  v\nimport os; os.environ['EVH_CONT']", stdout: "env: EVH_CONT=v\n", result: "'v'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			wantOK(t, c)
			if c.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
			}
			if tc.result != "" {
				wantResult(tc.result)(t, c)
			}
		})
	}
}

// Line numbers in errors stay those of the cell as written.
func TestMagicErrorLineNumbers(t *testing.T) {
	p := start(t, startOpts{})
	c := p.run("!true\nx = 1\n%pwd\n1/0")
	e := wantError(t, c, "ZeroDivisionError")
	tb := strings.Join(e.Traceback, "\n")
	if !strings.Contains(tb, "line 4") || !strings.Contains(tb, "1/0") {
		t.Errorf("traceback does not point at line 4:\n%s", tb)
	}
	// A magic a backslash continued leaves its lines blank, not gone.
	c = p.run("%pwd \\\n  -q\nx = 1\n1/0")
	e = wantError(t, c, "ZeroDivisionError")
	if tb := strings.Join(e.Traceback, "\n"); !strings.Contains(tb, "line 4") {
		t.Errorf("traceback after a continued magic does not point at line 4:\n%s", tb)
	}
	c = p.run("%%time\nx = 1\ny = undefined_name")
	e = wantError(t, c, "NameError")
	tb = strings.Join(e.Traceback, "\n")
	if !strings.Contains(tb, "line 3") || !strings.Contains(tb, "y = undefined_name") {
		t.Errorf("cell magic body error not at line 3:\n%s", tb)
	}
}

func TestUnknownMagic(t *testing.T) {
	p := start(t, startOpts{})
	for _, code := range []string{"%frobnicate 1", "%%frobnicate\nx"} {
		e := wantError(t, p.run(code), "UsageError")
		for _, want := range []string{"frobnicate", "%timeit", "%%capture", "--ipython"} {
			if !strings.Contains(e.Evalue, want) {
				t.Errorf("%q: error %q lacks %q", code, e.Evalue, want)
			}
		}
	}
	e := wantError(t, p.run("x = 1\n%%time\nx"), "UsageError")
	if !strings.Contains(e.Evalue, "first line") {
		t.Errorf("misplaced cell magic: %q", e.Evalue)
	}
}

func TestLineMagics(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "script.py", "import sys\nvalue = 40 + len(sys.argv)\nprint('ran', sys.argv[1:])\n")
	// %run of a notebook runs its code cells in the user namespace, magics
	// included, as IPython's does (its JSON is not Python); an .ipy file's
	// magics run too.
	writeFile(t, dir, "helper.ipynb", `{"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# setup"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["nb_value = 6\n", "%env NB_RUN=1"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('nb', nb_value * 7)\nnb_value"}],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
	writeFile(t, dir, "helper.ipy", "ipy_value = 5\n%env IPY_RUN=1\n")
	p := start(t, startOpts{dir: dir})
	for _, tc := range []struct {
		name, code, stdout, result string
		check                      func(t *testing.T, c cellResult)
	}{
		{name: "pwd", code: "%pwd", result: "'" + dir + "'"},
		{name: "cd prints and changes", code: "%cd sub", stdout: sub + "\n"},
		{name: "cd - goes back", code: "%cd -q -\nimport os; os.getcwd()", result: "'" + dir + "'"},
		{name: "env set and get", code: "%env FOO_X=bar baz\n%env FOO_X", stdout: "env: FOO_X=bar baz\n", result: "'bar baz'"},
		{name: "env hides secrets", code: "import os; os.environ['MY_TOKEN']='s3'\nd = %env\nd['MY_TOKEN']", result: "'<hidden>'"},
		{name: "set_env", code: "%set_env GREETING hi there\nimport os; os.environ['GREETING']", stdout: "env: GREETING=hi there\n", result: "'hi there'"},
		{name: "time prints and returns", code: "%time 6*7", result: "42", check: func(t *testing.T, c cellResult) {
			if !strings.HasPrefix(c.stdout, "CPU times: user ") || !strings.Contains(c.stdout, "\nWall time: ") {
				t.Errorf("%%time output %q", c.stdout)
			}
		}},
		{name: "timeit prints its line", code: "%timeit -n 10 -r 3 sum(range(10))", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, " per loop (mean ± std. dev. of 3 runs, 10 loops each)\n") {
				t.Errorf("%%timeit output %q", c.stdout)
			}
		}},
		{name: "timeit -o returns the result", code: "r = %timeit -q -o -n 5 -r 2 pass\n(r.loops, r.repeat, r.best > 0)", result: "(5, 2, True)"},
		{name: "who", code: "%reset -f\nalpha = 1\nbeta = 'b'\n%who", stdout: "alpha\tbeta\n"},
		{name: "who by type", code: "%who str", stdout: "beta\n"},
		{name: "whos", code: "%whos", check: func(t *testing.T, c cellResult) {
			for _, want := range []string{"Variable", "Type", "Data/Info", "alpha", "int", "beta", "str"} {
				if !strings.Contains(c.stdout, want) {
					t.Errorf("%%whos lacks %q:\n%s", want, c.stdout)
				}
			}
		}},
		{name: "reset without -f is refused", code: "%reset", check: func(t *testing.T, c cellResult) {
			if e := wantError(t, c, "UsageError"); !strings.Contains(e.Evalue, "%reset -f") {
				t.Errorf("evalue %q", e.Evalue)
			}
		}},
		{name: "reset -f clears user names, keeps helpers", code: "%reset -f\n('alpha' in dir(), callable(read), callable(tool))", result: "(False, True, True)"},
		{name: "run a script with args", code: "%run script.py one two\nvalue", stdout: "ran ['one', 'two']\n", result: "43"},
		{name: "run a notebook", code: "%run helper.ipynb\nimport os; (nb_value, os.environ['NB_RUN'])", stdout: "env: NB_RUN=1\nnb 42\n", result: "(6, '1')"},
		{name: "run an ipy file", code: "%run helper.ipy\nimport os; (ipy_value, os.environ['IPY_RUN'])", stdout: "env: IPY_RUN=1\n", result: "(5, '1')"},
		{name: "load shows, does not run", code: "%load script.py", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, "value = 40 + len(sys.argv)") || strings.Contains(c.stdout, "ran [") {
				t.Errorf("%%load output %q", c.stdout)
			}
		}},
		{name: "matplotlib inline accepted", code: "%matplotlib inline\nimport os; os.environ['MPLBACKEND']", result: "'Agg'"},
		{name: "load_ext autoreload and autoreload 2", code: "%load_ext autoreload\n%autoreload 2"},
		{name: "pip runs this interpreter's pip", code: "%pip --version", check: func(t *testing.T, c cellResult) {
			if !strings.HasPrefix(c.stdout, "pip ") || !strings.Contains(c.stdout, "python") {
				t.Errorf("%%pip --version printed %q", c.stdout)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			if tc.name != "reset without -f is refused" {
				wantOK(t, c)
			}
			if tc.check == nil && c.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
			}
			if tc.result != "" {
				wantResult(tc.result)(t, c)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// IPython's help syntax prints what IPython's terminal shows (a notebook
// pages it, and records nothing); nothing of the object is called.
func TestHelpSyntax(t *testing.T) {
	p := start(t, startOpts{})
	wantOK(t, p.run("import os\ndef f(a, b=2):\n    \"Add them.\"\n    return a + b\nclass C:\n    @property\n    def boom(self):\n        raise SystemExit('called')\nc = C()\nxs = [1, 2]"))
	for _, tc := range []struct{ name, code, stdout string }{
		{"name?", "len?", "Signature: len(obj, /)\nDocstring: Return the number of items in a container.\nType:      builtin_function_or_method\n"},
		{"?name", "?len", "Signature: len(obj, /)\nDocstring: Return the number of items in a container.\nType:      builtin_function_or_method\n"},
		{"name?? shows the source", "f??", "Signature: f(a, b=2)\nSource:\ndef f(a, b=2):\n    \"Add them.\"\n    return a + b\nFile:      <cell 1>\nType:      function\n"},
		{"%pinfo", "%pinfo f", "Signature: f(a, b=2)\nDocstring: Add them.\nFile:      <cell 1>\nType:      function\n"},
		{"a value", "xs?", "Type:        list\nString form: [1, 2]\nLength:      2\nDocstring:\n"},
		{"a dotted name, indented", "if True:\n    os.sep?", "Type:        str\nString form: '/'\nLength:      1\nDocstring:\n"},
		{"not found", "nosuch?", "Object `nosuch` not found.\n"},
		{"an attribute that is not there", "os.nosuch??", "Object `os.nosuch` not found.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			wantOK(t, c)
			if !strings.HasPrefix(c.stdout, tc.stdout) {
				t.Errorf("stdout %q, want it to begin %q", c.stdout, tc.stdout)
			}
		})
	}
	t.Run("a property is not run", func(t *testing.T) {
		c := p.run("c?")
		wantOK(t, c)
		if !strings.HasPrefix(c.stdout, "Type:        C\n") {
			t.Errorf("stdout %q", c.stdout)
		}
	})
	t.Run("help on a line with code stays a syntax error", func(t *testing.T) {
		c := p.run("x = len?")
		if e, ok := c.first(frames.TypeError); !ok || e.Ename != "SyntaxError" {
			t.Errorf("want a SyntaxError, got %+v", c.frames)
		}
	})
}
