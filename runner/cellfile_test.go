package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// cellFileScript is a percent script; TestCellFromFile sends its cells as
// evalhost run does, each with the script's path and its first line. Its
// "# pad" line becomes a number of comment lines.
const cellFileScript = `# A script's first cell is compiled without the syntax tree.
# pad
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
# %%
class C:
    def m(self):
        return [1/y for y in [0]]
# %%
C().m()
# %%
y = (f is 1)
# %%
warnings.filterwarnings("error", category=SyntaxWarning)
# %%
y = (f is 1)
# %%
del warnings.filters[0]
`

// TestCellFromFile: a cell sent with "filename" and "line" is compiled
// under the file's name with its lines numbered as in the file, so
// tracebacks (with the file's own lines), warnings, SyntaxErrors, inspect
// and traceback.print_exc name FILE:LINE, as python3 FILE. The rows run in
// order in one runner: the first is its first cell (the treeless compile).
// Far down a long file, a cell is compiled as it stands and moved to its
// lines (lineshift.py), nested code, compiler warnings and errors too.
func TestCellFromFile(t *testing.T) {
	for _, pad := range []int{0, 3000} {
		t.Run(fmt.Sprintf("%d lines down", pad), func(t *testing.T) { testCellFromFile(t, pad) })
	}
}

func testCellFromFile(t *testing.T, pad int) {
	script := strings.Replace(cellFileScript, "# pad\n", strings.Repeat("# padding\n", pad), 1)
	path := writeFile(t, t.TempDir(), "script.py", script)
	lines := strings.SplitAfter(script, "\n")
	// L is the script's line n, numbered as if pad were 1.
	L := func(n int) int {
		if n <= 1 {
			return n
		}
		return n - 1 + pad
	}
	cell := func(first, last int) map[string]any {
		return map[string]any{"code": strings.Join(lines[L(first)-1:L(last)], ""), "filename": path, "line": L(first)}
	}
	at := func(line int, fn string) string {
		return `File "` + path + `", line ` + strconv.Itoa(L(line)) + `, in ` + fn
	}
	rows := []struct {
		name      string
		req       map[string]any
		ename     string   // the error frame's, when the cell fails
		traceback []string // in the error frame's traceback, in order
		stderr    []string
		stdout    string
	}{
		{name: "first cell", req: cell(4, 7), ename: "ZeroDivisionError",
			traceback: []string{at(7, "<module>"), "    f(0)", at(6, "f"), "    return 1/x"}},
		{name: "warning", req: cell(9, 9), stderr: []string{path + ":" + strconv.Itoa(L(9)) + `: UserWarning: careful`, `  warnings.warn("careful")`}},
		{name: "inspect.getsource of an earlier cell's function", req: cell(11, 11), stdout: "def f(x):\n    return 1/x\n"},
		{name: "traceback.print_exc", req: cell(13, 16), stderr: []string{at(14, "<module>"), "    f(0)", at(6, "f")}},
		{name: "syntax error", req: cell(18, 18), ename: "SyntaxError",
			traceback: []string{`File "` + path + `", line ` + strconv.Itoa(L(18)), "    x = (1,"}},
		{name: "a cell magic's body", req: cell(20, 21), ename: "ZeroDivisionError",
			traceback: []string{at(21, "<module>"), "    f(0)", at(6, "f")}},
		{name: "one line", req: cell(23, 23), ename: "ZeroDivisionError", traceback: []string{at(23, "<module>"), "    f(0)"}},
		{name: "line 1 by default", req: map[string]any{"code": "f(0)", "filename": path}, ename: "ZeroDivisionError",
			traceback: []string{at(1, "<module>"), "    # A script's first cell", at(6, "f")}},
		{name: "a cell without a file keeps its name", req: map[string]any{"code": "\nf(0)"}, ename: "ZeroDivisionError",
			traceback: []string{`File "<cell 9>", line 2, in <module>`, "    f(0)", at(6, "f")}},
		{name: "filename not a string", req: map[string]any{"code": "1", "filename": 3}, ename: "RequestError"},
		{name: "line 0", req: map[string]any{"code": "1", "filename": path, "line": 0}, ename: "RequestError"},
		{name: "line not a number", req: map[string]any{"code": "1", "filename": path, "line": "3"}, ename: "RequestError"},
		{name: "a class", req: cell(25, 27)},
		{name: "a method's comprehension", req: cell(29, 29), ename: "ZeroDivisionError",
			traceback: []string{at(29, "<module>"), "    C().m()", at(27, "m"), "    return [1/y for y in [0]]"}},
		{name: "a compiler's warning", req: cell(31, 31),
			stderr: []string{path + ":" + strconv.Itoa(L(31)) + ": SyntaxWarning: ", "  y = (f is 1)"}},
		{name: "an error filter", req: cell(33, 33)},
		{name: "a compiler's warning as an error", req: cell(35, 35), ename: "SyntaxError",
			traceback: []string{`File "` + path + `", line ` + strconv.Itoa(L(35)), "    y = (f is 1)"}},
		{name: "the filter gone", req: cell(37, 37)},
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
				if tb := strings.Join(e.Traceback, "\n"); strings.Contains(tb, "cells.py") || strings.Contains(tb, "ipy_") ||
					strings.Contains(tb, "lineshift") {
					t.Errorf("the runner's frames show:\n%s", tb)
				}
			}
			wantInOrder(t, "stderr", c.stderr, tc.stderr)
			if tc.stdout != "" && c.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
			}
		})
	}
	t.Run("the compile taken", func(t *testing.T) {
		// lineshift loads for the first cell past cells._PAD_LINES
		want := "False"
		if pad > 1000 {
			want = "True"
		}
		c := p.run("'_evalhost_lineshift' in __import__('sys').modules")
		if got := text(t, wantResultFrame(t, c).Bundle, "text/plain"); got != want {
			t.Errorf("lineshift loaded: %s, want %s", got, want)
		}
	})
	t.Run("the file edited since", func(t *testing.T) {
		// warnings read linecache without checking it: its entry must go
		edited := strings.Replace(script, `warn("careful")`, `warn("careful")  # edited`, 1)
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		c := p.runReq(cell(9, 9))
		wantOK(t, c)
		wantInOrder(t, "stderr", c.stderr, []string{path + ":" + strconv.Itoa(L(9)) + `: UserWarning: careful`, `  warnings.warn("careful")  # edited`})
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
