package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// nb run shows the exception a cell failed with, as papermill does, so a
// failed run in a terminal or CI says why without opening the notebook;
// what the cell put in the message cannot drive the terminal.
func TestNotebookRunShowsTheError(t *testing.T) {
	tests := []struct {
		name     string
		cells    []string
		args     []string
		want     []string
		dontWant []string
		code     int // 0: 1
	}{
		{name: "the traceback of the failed cell", cells: []string{"md:# t", "x = 1", "def f():\n    return 1/0\nf()", "print('never')"},
			want: []string{"cell 2: error\n", "  Traceback (most recent call last):\n", "    return 1/0\n", "  ZeroDivisionError: division by zero\n"}},
		{name: "escape sequences in the message are removed", cells: []string{"raise ValueError('\\x1b]52;c;SGVsbG8=\\x07\\x1b[2Jplanted\\nevalhost nb run: ok')"},
			want: []string{"cell 0: error\n", "ValueError: planted\n", "  evalhost nb run: ok\n"}, dontWant: []string{"\x1b", "\x07", "\nevalhost nb run: ok"}},
		{name: "a long traceback shows its end", cells: []string{"exec('\\n'.join('def f%d(): return f%d()' % (i, i + 1) for i in range(60)) + '\\ndef f60(): return 1/0')\nf0()"},
			want: []string{"lines of the traceback; the notebook has all of it]\n", "  ZeroDivisionError: division by zero\n"}},
		{name: "every failed cell under --allow-errors", cells: []string{"1/0", "int('x')"}, args: []string{"--allow-errors"},
			want: []string{"cell 0: error\n", "  ZeroDivisionError", "cell 1: error\n", "  ValueError: invalid literal"}},
		{name: "a death says the status, then how", cells: []string{"print('a')", "import os; os._exit(3)", "print('c')"},
			want: []string{"cell 1: killed: interpreter died: exit code 3"}},
		{name: "a timeout says timed out once", cells: []string{"import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)"},
			args: []string{"--timeout", "1", "--grace", "100ms"}, code: 124,
			want: []string{"cell 0: timeout: the interpreter did not stop"}, dontWant: []string{"timed out;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			nb := filepath.Join(dir, "in.ipynb")
			writeNotebook(t, nb, tt.cells...)
			cmd := command(t, append([]string{"nb", "run", nb, "-o", filepath.Join(dir, "out.ipynb")}, tt.args...)...)
			_, stderr, code := runCaptured(t, cmd, false)
			if want := max(tt.code, 1); code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%q", w, stderr)
				}
			}
		})
	}
}
