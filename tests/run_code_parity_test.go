package tests

import (
	"os/exec"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// codeParityCells are -c CODEs whose errors, warnings and source lookups
// python3 -c names "<string>". No last expression: run's -c cell would
// show its value, python3 -c does not.
var codeParityCells = []struct{ name, code string }{
	{"traceback", "def f(x):\n    return 1/x\nf(0)\n"},
	{"exec_inside", "exec('1/0')\n"},
	{"chained", "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('v') from e\n"},
	{"syntax_error", "x = 1\ny = = 2\n"},
	{"syntax_error_tab", "if 1:\n\tx = = 1\n"},
	// python3 -c adds a newline to CODE: an error at its end names the line after
	{"unterminated", "s = '''abc\n"},
	{"unterminated_no_newline", "s = '''abc"},
	{"open_paren", "x = (1,\n"},
	{"no_block", "def f():"},
	{"backslash_at_end", "x = 1 + \\\n"},
	{"warning", "import warnings\nwarnings.warn('careful')\nprint('after')\n"},
	{"no_file", "print('__file__' in globals(), __name__)\n"},
	{"source", "import inspect, linecache\ndef f():\n    pass\n" +
		"print(repr(linecache.getline('<string>', 2)), len(linecache.getlines('<string>')))\n" +
		"try:\n    print(inspect.getsource(f), end='')\nexcept OSError as e:\n    print('OSError:', e)\n"},
	{"print_exc", "import traceback\ntry:\n    1/0\nexcept ZeroDivisionError:\n    traceback.print_exc()\n"},
}

// TestRunCodeAsPython compares evalhost run -c CODE (one-shot and under
// --session) with python3 -c CODE: the code is "<string>" in tracebacks,
// SyntaxErrors and warnings, there is no __file__, and no source line of
// it is shown or found (linecache, inspect) before 3.13, whose python3 -c
// keeps the code for linecache, so its lines show.
func TestRunCodeAsPython(t *testing.T) {
	python := testkit.Python(t)
	h := newDaemonHome(t)
	for _, c := range codeParityCells {
		py := exec.Command(python, "-c", c.code)
		py.Dir = t.TempDir()
		wantOut, wantErr, wantCode := runCaptured(t, py, false)
		for _, mode := range []string{"one-shot", "--session"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				args := []string{"run", "--python", python, "-c", c.code}
				if mode == "--session" {
					args = []string{"run", "--session", "code-" + c.name, "--python", python, "-c", c.code}
				}
				cmd := h.cmd(args...)
				cmd.Dir = py.Dir
				out, errOut, code := runCaptured(t, cmd, false)
				if errOut != wantErr {
					t.Errorf("stderr differs from python3 -c's\n got %q\nwant %q", errOut, wantErr)
				}
				if out != wantOut {
					t.Errorf("stdout %q, want python3 -c's %q", out, wantOut)
				}
				if code != wantCode {
					t.Errorf("exit %d, python3 -c's %d", code, wantCode)
				}
			})
		}
	}
}
