package runner

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Errors raised inside the runner's own helpers (prelude, IPython shims)
// show the cell's line and the error, never the runner's files.
func TestTracebacksHideRunnerFiles(t *testing.T) {
	p := start(t, startOpts{})
	for _, code := range []string{"read('/no/such/file')", "tool.anything()", "%cd /no/such/dir"} {
		t.Run(code, func(t *testing.T) {
			r := p.run(code)
			e, ok := r.first(frames.TypeError)
			if !ok {
				t.Fatalf("no error frame: %+v", r.frames)
			}
			tb := strings.Join(e.Traceback, "\n")
			for _, internal := range []string{"prelude.py", "ipy_", "core.py", "runner.py"} {
				if strings.Contains(tb, internal) {
					t.Fatalf("traceback shows %s:\n%s", internal, tb)
				}
			}
		})
	}
}

// A cell's error is reported whatever warnings filter the cell set, and
// without a warning of the runner's: 3.15's linecache warns
// (DeprecationWarning) of a frame whose module has no __spec__.loader as
// it formats a traceback, and the runner's frames are in it. A runner of
// its own per row: linecache warns of a file only until it keeps its lines.
func TestTracebackWarnsOfNoRunnerModule(t *testing.T) {
	for _, filter := range []string{"always", "error"} {
		for _, tc := range []struct{ name, code, last string }{
			{"a cell's error", "def f():\n    1/0\nf()", "ZeroDivisionError: division by zero"},
			{"an error in a runner helper", "read('/no/such/file')", "FileNotFoundError: "},
		} {
			t.Run(filter+"/"+tc.name, func(t *testing.T) {
				c := start(t, startOpts{}).run("import warnings\nwarnings.simplefilter('" + filter + "')\n" + tc.code)
				e, ok := c.first(frames.TypeError)
				if !ok {
					t.Fatalf("no error frame: %+v", c.frames)
				}
				if last := e.Traceback[len(e.Traceback)-1]; !strings.HasPrefix(last, tc.last) {
					t.Errorf("traceback ends %q, want %q...:\n%s", last, tc.last, strings.Join(e.Traceback, "\n"))
				}
				if c.stderr != "" {
					t.Errorf("stderr %q, want none", c.stderr)
				}
			})
		}
	}
}

// The carets under an error's line (3.11+) sit under its columns as they
// do when python3 runs the same code from a file, also on a cell's last
// line, which has no newline of its own (3.11 and 3.12 put them a column
// to the right when linecache's copy of that line had none).
func TestTracebackCaretsUnderTheirColumns(t *testing.T) {
	p := start(t, startOpts{})
	dir := t.TempDir()
	for _, tc := range []struct{ name, code string }{
		{"call on the last line", "print(1/0)"},
		{"after a line", "x = 1\nx / 0"},
		{"subscript", "d = {}\nd['key']"},
		{"not the last line", "[][1]\nprint('never')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "case.py", tc.code)
			out, _ := exec.Command(python(t), file).CombinedOutput()
			want := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			// The failing line and what follows it: python3's last frame.
			want = want[len(want)-3:]
			if !strings.HasPrefix(want[0], "    ") {
				want = want[1:] // no caret line before 3.11
			}
			e, ok := p.run(tc.code).first(frames.TypeError)
			if !ok {
				t.Fatal("no error frame")
			}
			got := e.Traceback[len(e.Traceback)-len(want):]
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("traceback ends\n%s\npython3 %s ends\n%s", strings.Join(got, "\n"), file, strings.Join(want, "\n"))
			}
		})
	}
}
