package runner

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// suggestionCells are cells whose error python3 reports with a suggestion
// (3.10+; ImportError's and "forget to import" 3.12+), and one without.
var suggestionCells = []struct{ name, code string }{
	{"name", "prnt('x')"},
	{"attribute", "import math\nmath.sqr(2)"},
	{"import from", "from collections import namedtupl"},
	{"forgot import", "sys.argv"},
	{"no suggestion", "xyzzy_qq"},
}

// TestErrorFrameSuggestion: a notebook cell's error frame (what serve, mcp
// and nb run send) ends its traceback with the line python3 ends its report
// of the same code with, its suggestion too ("Did you mean: 'print'?"),
// and its evalue is str() of the exception, without one, as ipykernel sends
// it.
func TestErrorFrameSuggestion(t *testing.T) {
	dir := t.TempDir()
	p := start(t, startOpts{})
	for _, tc := range suggestionCells {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "case.py", tc.code+"\n")
			out, _ := exec.Command(python(t), file).CombinedOutput()
			wantLast := lastLine(string(out))
			str, err := exec.Command(python(t), "-c", "import sys\nf = sys.argv[1]\ntry:\n"+
				"    exec(compile(open(f).read(), f, 'exec'), {})\nexcept Exception as e:\n    print(e, end='')", file).Output()
			if err != nil {
				t.Fatalf("str of the error: %v", err)
			}
			e, ok := p.run(tc.code).first(frames.TypeError)
			if !ok {
				t.Fatal("no error frame")
			}
			if got := e.Traceback[len(e.Traceback)-1]; got != wantLast {
				t.Errorf("traceback ends %q, python3 %s ends %q", got, file, wantLast)
			}
			if e.Evalue != string(str) {
				t.Errorf("evalue %q, want str(e) %q", e.Evalue, str)
			}
		})
	}
}

// TestErrorFrameSuggestionIPython: in full IPython mode the traceback is
// IPython's, and its last line is what IPython's own shell prints for the
// cell (IPython 8 and 9 add no suggestion on 3.10 and 3.11).
func TestErrorFrameSuggestionIPython(t *testing.T) {
	needIPython(t)
	dir := t.TempDir()
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, tc := range suggestionCells {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "case.py", tc.code+"\n")
			out, err := exec.Command(python(t), "-c", "import sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"+
				"InteractiveShell.instance().run_cell(open(sys.argv[1]).read())", file).CombinedOutput()
			if err != nil {
				t.Fatalf("IPython: %v\n%s", err, out)
			}
			want := lastLine(ansi.ReplaceAllString(string(out), ""))
			e, ok := p.run(tc.code).first(frames.TypeError)
			if !ok {
				t.Fatal("no error frame")
			}
			if got := e.Traceback[len(e.Traceback)-1]; got != want {
				t.Errorf("traceback ends %q, IPython's %q", got, want)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestSuggestionDirRunsOnce: the __dir__ an AttributeError's suggestion
// calls (3.10+) runs once per error, as in python3's report, and what it
// writes to sys.stderr reaches the cell's stderr, once (python3 3.10-3.12
// show it inside the error's last line; the runner, before the traceback).
func TestSuggestionDirRunsOnce(t *testing.T) {
	p := start(t, startOpts{})
	c := p.run("import sys\nsys.version_info >= (3, 10)")
	suggests := text(t, wantResultFrame(t, c).Bundle, "text/plain") == "True"
	c = p.run("class A:\n    alpha = 1\n    def __dir__(self):\n        print('from __dir__', file=sys.stderr)\n" +
		"        return ['alpha']\nA().alpah")
	e, ok := c.first(frames.TypeError)
	if !ok {
		t.Fatal("no error frame")
	}
	last := e.Traceback[len(e.Traceback)-1]
	want, calls := "AttributeError: 'A' object has no attribute 'alpah'", 0
	switch {
	case suggests && testkit.PythonAtLeast(t, 3, 15): // python3.15's own report words it so
		want, calls = want+". Did you mean '.alpha' instead of '.alpah'?", 1
	case suggests:
		want, calls = want+". Did you mean: 'alpha'?", 1
	}
	if last != want {
		t.Errorf("traceback ends %q, want %q", last, want)
	}
	if n := strings.Count(c.stderr, "from __dir__\n"); n != calls {
		t.Errorf("__dir__ wrote to stderr %d times, want %d: %q", n, calls, c.stderr)
	}
}

// TestSuggestionKeepsOtherThreadsStderr: while the interpreter's printer
// works a suggestion out (3.10-3.12: sys.stderr is a collector meanwhile),
// what another thread of the cell's prints to sys.stderr reaches the
// cell's stderr, every line: here a __dir__ that sleeps gives the thread
// the time to print through it.
func TestSuggestionKeepsOtherThreadsStderr(t *testing.T) {
	p := start(t, startOpts{})
	c1 := p.run("import sys, threading, time\nstop = False\n" +
		"def spam():\n    n = 0\n    while not stop:\n        print('tick', n, file=sys.stderr)\n        n += 1\n        time.sleep(0.001)\n" +
		"    print('ticks', n, file=sys.stderr)\n" +
		"th = threading.Thread(target=spam)\nth.start()\n" +
		"class A:\n    alpha = 1\n    def __dir__(self):\n        time.sleep(0.05)\n        return ['alpha']\n" +
		"A().alpah")
	if _, ok := c1.first(frames.TypeError); !ok {
		t.Fatal("no error frame")
	}
	c2 := p.run("stop = True\nth.join()")
	if d := c2.done(); d.Status != "ok" {
		t.Fatalf("join: done %+v", d)
	}
	lines := strings.Split(strings.TrimRight(c1.stderr+c2.stderr, "\n"), "\n")
	var n int
	if _, err := fmt.Sscanf(lines[len(lines)-1], "ticks %d", &n); err != nil {
		t.Fatalf("no count at the end of stderr: %v\n%s", err, c1.stderr+c2.stderr)
	}
	if len(lines)-1 != n {
		t.Fatalf("%d tick lines, the thread printed %d", len(lines)-1, n)
	}
	for i, l := range lines[:n] {
		if l != fmt.Sprintf("tick %d", i) {
			t.Fatalf("line %d is %q, want tick %d", i, l, i)
		}
	}
}
