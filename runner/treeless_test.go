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
