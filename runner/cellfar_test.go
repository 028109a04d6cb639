package runner

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

type farCell struct{ name, code string }

// farScripts are percent scripts, each a list of cells run in order, each
// of which must show the same 3,000 lines down its file (compiled where
// it stands and moved to its lines, lineshift.py) as at its top (padded to
// them), line numbers apart: what python3 shows for it, padded as the
// compiler reads the whole file. "@" is the line of the next cell's first
// line. inspect parses or tokenizes the file, which SyntaxErrors spoil:
// they have a script of their own.
var farScripts = []struct {
	name  string
	cells []farCell
}{
	{"syntax errors", []farCell{
		{"setup", "import sys\n"},
		// the message names a line; the caret is placed on the line the
		// compiler read back from the file; 3.9-3.11 show an f-string's
		// expression, not the line; a warning before the error, once
		{"a bracket closing another line's", "x = (1,\n  2]\n"},
		{"an unterminated string", "x = 1\ns = \"\"\"abc\n"},
		{"an unindent", "if 1:\n        a = 1\n    b = 'a longer line than the padding'\n"},
		{"an f-string's error", "x = 1\ny = f\"{x +}\"\n"},
		{"a warning, then a SyntaxError", "z = (sys is 1)\nw = (1,\n"},
		{"return outside a function", "x = 1\nreturn x\n"},
	}},
	{"code", []farCell{
		{"setup", "import sys, inspect, warnings\n"},
		// the cell's own code, as python3's module: it begins at line 1
		// (3.10+; at its first statement before), its prologue on line 0
		// (3.11+)
		{"the cell's code", "c = sys._getframe().f_code\nprint(c.co_firstlineno, list(getattr(c, 'co_lines', list)())[:2])\n"},
		{"its last expression's", "a = 1\nsys._getframe().f_code.co_firstlineno\n"},
		{"a cell that awaits", "await __import__('asyncio').sleep(0)\nc = sys._getframe().f_code\nprint(c.co_firstlineno, list(getattr(c, 'co_lines', list)())[:4])\n"},
		{"a tracer", "def tr(frame, event, arg):\n    if frame.f_code.co_filename == __file__:\n        print(event, frame.f_code.co_name, frame.f_lineno)\nsys.settrace(tr)\n"},
		{"a cell traced", "y = 1\n"}, // (not pass: see lineshift.py on 3.8-3.10)
		{"no tracer", "sys.settrace(None)\n"},
		// 3.13+: a class body stores its first line, a constant, as
		// __firstlineno__, which inspect.getsource reads
		{"a class", "class K:\n    x = 2\n"},
		{"its source", "print(inspect.getsource(K), K.__dict__.get('__firstlineno__'))\n"},
		{"a class warned of", "class Q:\n    w = (1 is 1)\n"},
	}},
	{"warnings", []farCell{
		{"setup", "import sys, warnings\n"},
		// a filter's line is matched before a warning is shown
		{"a filter for a line", "warnings.filterwarnings('ignore', category=SyntaxWarning, lineno=@)\n"},
		{"the line filtered", "v = (sys is 1)\n"},
	}},
}

// TestCellFarAsNear runs each of farScripts at the top of a script and
// again 3,000 lines down it (each run in its own runner), and compares
// what each cell sent, line numbers from 3,000 on counted from the top.
func TestCellFarAsNear(t *testing.T) {
	const pad = 3000
	big := regexp.MustCompile(`\b\d{4,}\b`)
	for _, s := range farScripts {
		t.Run(s.name, func(t *testing.T) {
			near, far := farRun(t, s.cells, 0), farRun(t, s.cells, pad)
			for i, c := range s.cells {
				got := big.ReplaceAllStringFunc(far[i], func(s string) string {
					n, _ := strconv.Atoi(s)
					if n < pad {
						return s
					}
					return strconv.Itoa(n - pad)
				})
				if got != near[i] {
					t.Errorf("%s: %d lines down:\n%s\nat the top:\n%s", c.name, pad, got, near[i])
				}
			}
		})
	}
}

// farRun sends cells from a script with pad comment lines after the
// first, as evalhost run does: each with the script's path and its first
// line; it returns what each cell sent, the script's path as FILE.
func farRun(t *testing.T, cells []farCell, pad int) []string {
	// starts[i]: the line of cell i's first line (after its "# %%")
	starts := make([]int, len(cells)+1)
	line := 1
	for i, c := range cells {
		if i == 1 {
			line += pad
		}
		starts[i] = line + 1
		line += 1 + strings.Count(c.code, "\n")
	}
	starts[len(cells)] = line + 1
	codes := make([]string, len(cells))
	var b strings.Builder
	for i, c := range cells {
		if i == 1 {
			b.WriteString(strings.Repeat("# padding\n", pad))
		}
		codes[i] = strings.ReplaceAll(c.code, "@", strconv.Itoa(starts[i+1]))
		b.WriteString("# %%\n" + codes[i])
	}
	path := writeFile(t, t.TempDir(), "far.py", b.String())
	p := start(t, startOpts{})
	out := make([]string, len(cells))
	for i := range cells {
		req := map[string]any{"code": codes[i], "filename": path, "line": starts[i]}
		if i == 0 {
			req["argv"], req["file"] = []string{path}, path // as evalhost run: __file__, for inspect and the tracer
		}
		res := p.runReq(req)
		out[i] = strings.ReplaceAll(sent(t, res), path, "FILE")
	}
	return out
}

// sent is what a cell sent: its status, error, result and output.
func sent(t *testing.T, c cellResult) string {
	s := c.done().Status
	if e, ok := c.first(frames.TypeError); ok {
		s += fmt.Sprintf("\n%s: %s\n%s", e.Ename, e.Evalue, strings.Join(e.Traceback, "\n"))
	}
	if r, ok := c.first(frames.TypeResult); ok {
		s += "\nresult " + text(t, r.Bundle, "text/plain")
	}
	return s + "\nstdout " + c.stdout + "\nstderr " + c.stderr
}
