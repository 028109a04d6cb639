package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/evalhost/evalhost/internal/testkit"
)

// What is piped into a one-shot run (or a file on its stdin) is the
// script's stdin, as python3 FILE reads it: input(), sys.stdin, a
// subprocess's fd 0; an empty one is EOFError, as python3's.
func TestRunReadsPipedStdin(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	src := "import sys\nname = input('name? ')\n# %%\nprint('hello', name)\nrest = sys.stdin.read()\n" +
		"print(len(rest.splitlines()), 'more lines')\n"
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		stdin string
		args  []string // after run and python3 alike
	}{
		{"input and sys.stdin across cells", "ada\nb\nc\n", []string{script}},
		{"-c reads it", "a,b\n1,2\n", []string{"-c", "import csv, sys; print(list(csv.reader(sys.stdin)))"}},
		{"a subprocess reads it", "first\nsecond\n", []string{"-c", "import subprocess\nr = subprocess.run(['cat'])"}},
		{"empty stdin is EOFError", "", []string{"-c", "input()"}},
		{"binary stdin", "\xff\x00\xfe", []string{"-c", "import sys; print(sys.stdin.buffer.read())"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runEvalhost(t, c.stdin, append([]string{"run"}, c.args...)...)
			py := exec.Command("python3", c.args...)
			py.Dir, py.Stdin = t.TempDir(), strings.NewReader(c.stdin)
			pyOut, pyErr, pyCode := runCaptured(t, py, false)
			if out != pyOut || code != pyCode {
				t.Errorf("stdout %q exit %d, python3's %q exit %d; stderr:\n%s", out, code, pyOut, pyCode, errOut)
			}
			if pyErr != "" && !strings.Contains(errOut, lastLine(pyErr)) {
				// Tracebacks name the cell, not "<string>": compare their last lines.
				t.Errorf("stderr %q does not end as python3's %q", errOut, pyErr)
			}
		})
	}
}

// Cells read from stdin (run -) and a session's cells have no stdin:
// input() fails at once, as it does at a terminal, where a cell must not
// wait for a person.
func TestRunStdinNotGiven(t *testing.T) {
	h := newDaemonHome(t)
	t.Run("cells from stdin", func(t *testing.T) {
		// python3 - has read its stdin to the end: input() finds none.
		const script = "import sys\nprint(repr(sys.stdin.read()))\ninput()\n"
		out, errOut, code := runEvalhost(t, script, "run", "-")
		py := exec.Command(testkit.Python(t), "-")
		py.Stdin = strings.NewReader(script)
		wantOut, wantErr, wantCode := runCaptured(t, py, false)
		if out != wantOut || errOut != wantErr || code != wantCode {
			t.Errorf("exit %d, stdout %q, stderr %q; python3 - gave %d, %q, %q", code, out, errOut, wantCode, wantOut, wantErr)
		}
	})
	t.Run("a session", func(t *testing.T) {
		// What is piped in cannot reach the background process's
		// interpreter: sys.stdin does not read as if there had been none,
		// and both say what to do instead.
		for _, code := range []string{"input()", "import sys\nfor line in sys.stdin: print(line)", "import sys; sys.stdin.read()"} {
			cmd := h.cmd("run", "--session", "stdin", "-c", code)
			cmd.Stdin = strings.NewReader("piped\n")
			out, errOut, exit := runCaptured(t, cmd, false)
			if exit != 1 || out != "" || !strings.Contains(errOut, "StdinNotImplementedError") || !strings.Contains(errOut, "without --session") {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want StdinNotImplementedError saying to run without --session", code, exit, out, errOut)
			}
		}
	})
	t.Run("a terminal", func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer ptmx.Close()
		defer tty.Close()
		// Neither input() nor sys.stdin reads as if there were no input:
		// python3 would wait for typing, so each says to pipe or --tty.
		// The refusal is the runner's (stdio.py), whose frames no
		// traceback shows, --ipython's neither.
		for _, mode := range [][]string{nil, {"--ipython"}} {
			if mode != nil {
				testkit.NeedModule(t, "IPython", "ipython")
			}
			for _, code := range []string{"input()", "import sys\nfor line in sys.stdin: print(line)", "import sys; sys.stdin.read()"} {
				cmd := command(t, append(append([]string{"run"}, mode...), "-c", code)...)
				cmd.Stdin = tty
				out, errOut, exit := runCaptured(t, cmd, false)
				if exit != 1 || out != "" || !strings.Contains(errOut, "StdinNotImplementedError") || !strings.Contains(errOut, "--tty") {
					t.Errorf("%v %s: exit %d, stdout %q, stderr %q; want StdinNotImplementedError saying --tty", mode, code, exit, out, errOut)
				}
				if strings.Contains(errOut, "stdio.py") {
					t.Errorf("%v %s: stderr shows the runner's frames:\n%s", mode, code, errOut)
				}
			}
		}
	})
}
