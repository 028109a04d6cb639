package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// script is a request of a script cell ("script": true), as python3 runs a
// file: no expression statement's value is shown.
func script(code string) map[string]any { return map[string]any{"code": code, "script": true} }

// TestScriptCells: a script cell shows no value, its last expression's
// included, and calls no sys.displayhook; a notebook cell after it in the
// same runner shows its value again (in IPython mode the shell's
// interactivity is put back).
func TestScriptCells(t *testing.T) {
	inBothModes(t, func(t *testing.T, p *proc) {
		for _, tc := range []struct {
			name  string
			req   map[string]any
			check func(t *testing.T, c cellResult)
		}{
			{"a notebook cell shows its value", map[string]any{"code": "x = 41\nx + 1"}, wantResult("42")},
			{"a script's last expression", script("x = 41\nx + 1"), wantNo(frames.TypeResult)},
			{"a one-line script", script("x + 1"), wantNo(frames.TypeResult)},
			{"a script's call", script("def main():\n    print('working')\n    return 0\n\nmain()\n"), func(t *testing.T, c cellResult) {
				wantNo(frames.TypeResult)(t, c)
				if c.stdout != "working\n" {
					t.Errorf("stdout %q, want only what main printed", c.stdout)
				}
			}},
			{"no Out history", map[string]any{"code": "len(Out), _"}, wantResult("(1, 42)")},
			{"a script's displayhook", script("import sys\nsys.displayhook = lambda v: print('hook', v)\n42"), func(t *testing.T, c cellResult) {
				wantNo(frames.TypeResult)(t, c)
				if c.stdout != "" {
					t.Errorf("stdout %q: the displayhook was called", c.stdout)
				}
			}},
			{"a script's docstring", script("\"\"\"Only a doc.\"\"\"\n"), wantNo(frames.TypeResult)},
			{"is __doc__", map[string]any{"code": "__doc__"}, wantResult("'Only a doc.'")},
			{"a notebook cell after scripts", map[string]any{"code": "x * 2"}, wantResult("82")},
			// python3 compiles a file without top-level await; a notebook cell awaits.
			{"a script's top-level await", script("import asyncio\nawait asyncio.sleep(0)\n"), func(t *testing.T, c cellResult) {
				if e := wantError(t, c, "SyntaxError"); !strings.Contains(e.Evalue, "'await' outside function") {
					t.Errorf("error %q", e.Evalue)
				}
			}},
			{"a notebook cell awaits", map[string]any{"code": "import asyncio\nawait asyncio.sleep(0, 7)"}, wantResult("7")},
			{"script not a bool", map[string]any{"code": "1", "script": "yes"}, func(t *testing.T, c cellResult) {
				if e := wantError(t, c, "RequestError"); !strings.Contains(e.Evalue, `"script" must be true or false`) {
					t.Errorf("error %q", e.Evalue)
				}
			}},
			{"inScript not a bool", map[string]any{"code": "1", "inScript": 1}, func(t *testing.T, c cellResult) {
				if e := wantError(t, c, "RequestError"); !strings.Contains(e.Evalue, `"inScript" must be true or false`) {
					t.Errorf("error %q", e.Evalue)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.check(t, p.runReq(tc.req)) })
		}
	})
}

// TestScriptCellTreeless: a runner's first cell, a script, is compiled
// without the syntax-tree types, as a notebook's first cell is, and keeps
// its docstring, errors' lines and compile()'s fallbacks.
func TestScriptCellTreeless(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		treeless   bool
		ename      string
		traceback  string
	}{
		{name: "a script", code: "x = 1\nx + 1", treeless: true},
		{name: "a docstring", code: "\"\"\"Doc.\"\"\"\nprint(__doc__)\n__doc__", treeless: true},
		{name: "an error's line", code: "x = 1\n\n1/0\nx", treeless: true, ename: "ZeroDivisionError", traceback: `File "<cell 1>", line 3`},
		{name: "a semicolon", code: "x = 1; x", treeless: true},
		{name: "a future import goes to compile", code: "from __future__ import annotations\nx: undefined_name = 1\nx"},
		{name: "a syntax error goes to compile", code: "x = 1\n1 +", ename: "SyntaxError", traceback: `File "<cell 1>", line 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{pipelined: []map[string]any{script(tc.code)}, pyArgs: []string{"-S"}})
			c := p.collect("c1", nil)
			wantNo(frames.TypeResult)(t, c)
			if tc.ename != "" {
				if tb := strings.Join(wantError(t, c, tc.ename).Traceback, "\n"); !strings.Contains(tb, tc.traceback) {
					t.Errorf("traceback lacks %q:\n%s", tc.traceback, tb)
				}
			} else if d := c.done(); d.Status != "ok" {
				t.Errorf("done %+v", d)
			}
			if strings.Contains(tc.code, "Doc.") && c.stdout != "Doc.\n" {
				t.Errorf("stdout %q, want the docstring printed", c.stdout)
			}
			n := text(t, wantResultFrame(t, p.run("__import__('sys').modules['_evalhost_cells']._treeless_cells")).Bundle, "text/plain")
			if got := n != "0"; got != tc.treeless {
				t.Errorf("compiled without syntax trees: %v (%s cells), want %v", got, n, tc.treeless)
			}
		})
	}
}

// TestScriptCellFigures: a script's figures left open are not sent (python3
// shows none); its plt.show() sends the open ones, as display frames where
// it was called, under the runner's Agg. A notebook cell's plt.show() sends
// nothing itself: its figures go out as it ends, as before.
//
// In IPython mode too, whose matplotlib-inline backend sends the figures a
// cell drew from its post_execute hook: not a script's.
func TestScriptCellFigures(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	inBothModes(t, testScriptCellFigures)
}

func testScriptCellFigures(t *testing.T, p *proc) {
	displays := func(c cellResult) int {
		n := 0
		for _, f := range c.frames {
			if f.Type == frames.TypeDisplay {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		req      map[string]any
		displays int // a figure's has its PNG
	}{
		{"left open by a script", script("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.gcf()"), 0},
		{"shown by a script", script("plt.close('all')\nplt.plot([1, 2])\nplt.figure()\nplt.plot([2, 1])\nplt.show()\nassert not plt.get_fignums()"), 2},
		{"shown by a script, one left after", script("plt.plot([1, 2])\nplt.show()\nplt.plot([2, 1])\nplt.close('all')"), 1},
		{"display() in a script", script("display('shown')"), 1},
		{"a notebook cell", map[string]any{"code": "plt.plot([1, 2])\nplt.show()"}, 1},
		{"left open by a script again", script("plt.plot([1, 2])"), 0},
		{"a notebook cell after", map[string]any{"code": "plt.close('all')\nplt.plot([1, 2])"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(tc.req)
			if d := c.done(); d.Status != "ok" {
				t.Fatalf("done %+v, frames %+v", d, c.frames)
			}
			if n := displays(c); n != tc.displays {
				t.Errorf("%d displays sent, want %d: %+v", n, tc.displays, c.frames)
			}
			for _, f := range c.frames {
				if f.Type == frames.TypeDisplay && strings.Contains(string(f.Bundle["text/plain"]), "Figure") && f.Bundle["image/png"] == nil {
					t.Errorf("a figure without its PNG: %+v", f)
				}
			}
		})
	}
}
