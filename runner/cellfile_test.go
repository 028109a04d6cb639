package runner

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// cellFileScript is a percent script; TestCellFromFile sends its cells as
// evalhost run does, each with the script's path and its first line.
const cellFileScript = `# A script's first cell is compiled without the syntax tree.
# %%
import inspect, traceback, warnings
def f(x):
    return 1/x
f(0)
# %%
warnings.warn("careful")
# %%
print(inspect.getsource(f), end="")
# %%
try:
    f(0)
except ZeroDivisionError:
    traceback.print_exc()
# %%
x = (1,
# %%
%%time
f(0)
# %%
f(0)
`

// TestCellFromFile: a cell sent with "filename" and "line" is compiled
// under the file's name with its lines numbered as in the file, so
// tracebacks (with the file's own lines), warnings, SyntaxErrors, inspect
// and traceback.print_exc name FILE:LINE, as python3 FILE. The rows run in
// order in one runner: the first is its first cell (the treeless compile).
func TestCellFromFile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "script.py", cellFileScript)
	lines := strings.SplitAfter(cellFileScript, "\n")
	cell := func(first, last int) map[string]any {
		return map[string]any{"code": strings.Join(lines[first-1:last], ""), "filename": path, "line": first}
	}
	at := func(line int, fn string) string {
		return `File "` + path + `", line ` + strconv.Itoa(line) + `, in ` + fn
	}
	rows := []struct {
		name      string
		req       map[string]any
		ename     string   // the error frame's, when the cell fails
		traceback []string // in the error frame's traceback, in order
		stderr    []string
		stdout    string
	}{
		{name: "first cell", req: cell(3, 6), ename: "ZeroDivisionError",
			traceback: []string{at(6, "<module>"), "    f(0)", at(5, "f"), "    return 1/x"}},
		{name: "warning", req: cell(8, 8), stderr: []string{path + `:8: UserWarning: careful`, `  warnings.warn("careful")`}},
		{name: "inspect.getsource of an earlier cell's function", req: cell(10, 10), stdout: "def f(x):\n    return 1/x\n"},
		{name: "traceback.print_exc", req: cell(12, 15), stderr: []string{at(13, "<module>"), "    f(0)", at(5, "f")}},
		{name: "syntax error", req: cell(17, 17), ename: "SyntaxError",
			traceback: []string{`File "` + path + `", line 17`, "    x = (1,"}},
		{name: "a cell magic's body", req: cell(19, 20), ename: "ZeroDivisionError",
			traceback: []string{at(20, "<module>"), "    f(0)", at(5, "f")}},
		{name: "one line", req: cell(22, 22), ename: "ZeroDivisionError", traceback: []string{at(22, "<module>"), "    f(0)"}},
		{name: "line 1 by default", req: map[string]any{"code": "f(0)", "filename": path}, ename: "ZeroDivisionError",
			traceback: []string{at(1, "<module>"), "    # A script's first cell", at(5, "f")}},
		{name: "a cell without a file keeps its name", req: map[string]any{"code": "\nf(0)"}, ename: "ZeroDivisionError",
			traceback: []string{`File "<cell 9>", line 2, in <module>`, "    f(0)", at(5, "f")}},
		{name: "filename not a string", req: map[string]any{"code": "1", "filename": 3}, ename: "RequestError"},
		{name: "line 0", req: map[string]any{"code": "1", "filename": path, "line": 0}, ename: "RequestError"},
		{name: "line not a number", req: map[string]any{"code": "1", "filename": path, "line": "3"}, ename: "RequestError"},
	}
	p := start(t, startOpts{})
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(tc.req)
			if tc.ename == "" {
				wantOK(t, c)
			} else {
				e := wantError(t, c, tc.ename)
				wantInOrder(t, "traceback", strings.Join(e.Traceback, "\n"), tc.traceback)
				if tb := strings.Join(e.Traceback, "\n"); strings.Contains(tb, "cells.py") || strings.Contains(tb, "ipy_") {
					t.Errorf("the runner's frames show:\n%s", tb)
				}
			}
			wantInOrder(t, "stderr", c.stderr, tc.stderr)
			if tc.stdout != "" && c.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
			}
		})
	}
	t.Run("the file edited since", func(t *testing.T) {
		// warnings read linecache without checking it: its entry must go
		edited := strings.Replace(cellFileScript, `warn("careful")`, `warn("careful")  # edited`, 1)
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		c := p.runReq(cell(8, 8))
		wantOK(t, c)
		wantInOrder(t, "stderr", c.stderr, []string{path + `:8: UserWarning: careful`, `  warnings.warn("careful")  # edited`})
	})
}

// wantInOrder checks that each of want is in got, each after the one before.
func wantInOrder(t *testing.T, what, got string, want []string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s lacks %q (in order) in:\n%s", what, w, got)
			return
		}
		rest = rest[i+len(w):]
	}
}
