package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// EVALHOST_IPYTHON=1: cells run through IPython's InteractiveShell; the
// frames are the runner's own.
func TestFullIPythonMode(t *testing.T) {
	needIPython(t)
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	for _, tc := range []struct {
		name, code, stdout, result, ename string
		check                             func(t *testing.T, c cellResult)
	}{
		{name: "result with its count", code: "x = 6\nx * 7", result: "42", check: func(t *testing.T, c cellResult) {
			if r := wantResultFrame(t, c); r.ExecutionCount != 1 {
				t.Errorf("executionCount %d", r.ExecutionCount)
			}
		}},
		{name: "it is IPython", code: "from IPython.core.interactiveshell import InteractiveShell\nisinstance(get_ipython(), InteractiveShell)", result: "True"},
		{name: "a magic only IPython has", code: "%alias_magic -l tt time\n%tt 1+1", result: "2", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, "Created `%tt` as an alias for `%time`.") {
				t.Errorf("stdout %q", c.stdout)
			}
		}},
		{name: "print", code: "print('hi')", stdout: "hi\n"},
		{name: "who leaves start-up names out", code: "%who_ls", check: func(t *testing.T, c cellResult) {
			r := text(t, wantResultFrame(t, c).Bundle, "text/plain")
			if strings.Contains(r, "'tool'") || strings.Contains(r, "'read'") || !strings.Contains(r, "'x'") {
				t.Errorf("%%who_ls = %s", r)
			}
		}},
		{name: "error frame without colours", code: "def f():\n    return 1/0\nf()", ename: "ZeroDivisionError", check: func(t *testing.T, c cellResult) {
			e, _ := c.first(frames.TypeError)
			tb := strings.Join(e.Traceback, "\n")
			if strings.Contains(tb, "\x1b[") || !strings.Contains(tb, "return 1/0") {
				t.Errorf("traceback:\n%s", tb)
			}
		}},
		{name: "display with id and update", code: "from IPython.display import display, HTML\nh = display(HTML('a'), display_id='f1')\nh.update(HTML('b'))", check: func(t *testing.T, c cellResult) {
			ds := displays(c)
			if len(ds) != 2 || ds[0].DisplayID != "f1" || ds[1].Type != frames.TypeUpdateDisplay {
				t.Errorf("frames %+v", ds)
			}
		}},
		{name: "history", code: "Out[1]", result: "42"},
		// IPython's exit() asks; the cell runs on, and then ends as a
		// sys.exit() does in the runner's own mode.
		{name: "exit() ends after the cell", code: "exit()\nprint('after')", check: func(t *testing.T, c cellResult) {
			if d := c.done(); !d.Exit || c.stdout != "after\n" {
				t.Errorf("done %+v, stdout %q; want exit after the rest of the cell", d, c.stdout)
			}
		}},
		{name: "quit() too", code: "quit()", check: func(t *testing.T, c cellResult) {
			if d := c.done(); !d.Exit {
				t.Errorf("done %+v, want exit", d)
			}
		}},
		{name: "the next cell does not exit", code: "1", result: "1"},
		// As in ipykernel, whose exit() a notebook calls: keep_kernel=True
		// ends nothing (it raised TypeError here).
		{name: "exit(keep_kernel=True) keeps the session", code: "exit(keep_kernel=True)\nprint('kept')", check: func(t *testing.T, c cellResult) {
			if d := c.done(); d.Exit || d.Status != "ok" || c.stdout != "kept\n" {
				t.Errorf("done %+v, stdout %q stderr %q; want ok, no exit", d, c.stdout, c.stderr)
			}
		}},
		{name: "exit() after it exits", code: "exit()", check: func(t *testing.T, c cellResult) {
			if d := c.done(); !d.Exit {
				t.Errorf("done %+v, want exit", d)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			if tc.ename != "" {
				wantError(t, c, tc.ename)
			} else {
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
	t.Run("interrupt is cancelled", func(t *testing.T) {
		p.send(map[string]any{"id": "int", "code": "import time\nprint('go', flush=True)\ntime.sleep(30)"})
		p.out.waitFor(t, "go")
		p.interrupt()
		c := p.collect("int", nil)
		if d := c.done(); !d.Cancelled || d.Status != "error" {
			t.Errorf("done %+v", d)
		}
	})
}

func TestFullIPythonModeWithoutIPython(t *testing.T) {
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}, pyArgs: []string{"-S"}})
	e := wantError(t, p.run("1+1"), "IPythonUnavailable")
	for _, want := range []string{"EVALHOST_IPYTHON=1", "pip install ipython", "without --ipython"} {
		if !strings.Contains(e.Evalue, want) {
			t.Errorf("evalue %q lacks %q", e.Evalue, want)
		}
	}
}

// What a terminal or kernel shell adds to InteractiveShell, full mode does
// as the runner's own mode: IPython's base raised NotImplementedError at
// %matplotlib inline, AttributeError at %edit, and %load did nothing.
func TestFullIPythonModeShellHooks(t *testing.T) {
	needIPython(t)
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	script := filepath.Join(t.TempDir(), "s.py")
	if err := os.WriteFile(script, []byte("print('loaded')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, code string
		check      func(t *testing.T, c cellResult)
	}{
		{name: "load shows the code, not run", code: "%load " + script, check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, "shown, not run") || !strings.Contains(c.stdout, "print('loaded')\n") || strings.Contains(c.stdout, "loaded\n\n") {
				t.Errorf("stdout %q", c.stdout)
			}
		}},
		{name: "gui says why", code: "%gui qt", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout+c.stderr, "without a GUI event loop") {
				t.Errorf("stdout %q stderr %q", c.stdout, c.stderr)
			}
		}},
		// IPython prints a UsageError on stderr, and the cell fails.
		{name: "edit says why", code: "%edit x.py", check: func(t *testing.T, c cellResult) {
			if d := c.done(); d.Status != "error" || !strings.Contains(c.stderr, "UsageError: %edit opens ") || !strings.Contains(c.stderr, "x.py in an editor") {
				t.Errorf("done %+v, stderr %q", d, c.stderr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			if tc.name != "edit says why" {
				wantOK(t, c)
			}
			tc.check(t, c)
		})
	}
	t.Run("matplotlib inline", func(t *testing.T) {
		testkit.NeedModule(t, "matplotlib", "matplotlib")
		wantOK(t, p.run("%matplotlib inline"))
		c := p.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);")
		wantOK(t, c)
		if ds := displays(c); len(ds) != 1 || text(t, ds[0].Bundle, "image/png") == "" {
			t.Errorf("want one PNG display: %+v", c.frames)
		}
	})
}
