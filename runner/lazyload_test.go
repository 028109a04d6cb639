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
				// imports (the runner's own imports) loads with the first of them, any feature's
				if m = strings.Trim(m, "'"); strings.HasPrefix(m, "_evalhost_") && m != "_evalhost_imports" {
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
// types are not even built).
func TestStartLoadsNoHeavyModules(t *testing.T) {
	// The expression cell names what is loaded, plus traceback, the warm-up's
	// first import: the warm-up runs after 50 ms idle and imports ast, so a
	// loaded machine can make one try inconclusive, never a false pass.
	const check = "sorted(__import__('sys').modules.keys() & {'threading', '_ast', 'functools', 'traceback'})"
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
		if strings.Contains(got, "traceback") {
			t.Logf("try %d: the warm-up ran before the check (%s); again", try, got)
			p.close()
			continue
		}
		if got != "[]" {
			t.Fatalf("start-up and one-line statements loaded %s, want none of them", got)
		}
		return
	}
	t.Fatal("the warm-up ran before the check in every try")
}
