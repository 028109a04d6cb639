package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// run --session at a terminal tells the session's Python cells what a
// one-shot run there tells its own (TestRunTellsCellsOfATerminal): the
// same bytes under the same 100x30 terminal. Per command: the session's
// interpreter runs already (a piped command started it), and the next
// command in it, piped into a file, sees no terminal again.
func TestRunSessionTellsCellsOfATerminal(t *testing.T) {
	h := newDaemonHome(t)
	const state = "import sys, shutil, os; print(sys.stdout.isatty(), sys.stderr.isatty(), sys.stdout.line_buffering, " +
		"*shutil.get_terminal_size(), os.isatty(1), os.environ.get('FORCE_COLOR'))"
	const piped = "False False False 80 24 False None"
	// A script's cells go in one request, and are one script: the first
	// cell's change to a variable the terminal gave lasts into the next.
	percent := filepath.Join(t.TempDir(), "cells.py")
	if err := os.WriteFile(percent, []byte("# %%\nimport os, shutil\nos.environ['COLUMNS'] = '5'\ndel os.environ['NO_COLOR']\n"+
		"# %%\nprint(shutil.get_terminal_size().columns, os.environ.get('NO_COLOR'))\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		env  []string
		pipe string // what the same session shows piped into a file next; "" to skip
	}{
		{"isatty, line buffering, size", []string{"-c", state}, nil, piped},
		{"COLUMNS set by the command", []string{"-c", state}, []string{"COLUMNS=61"}, piped},
		{"FORCE_COLOR", []string{"-c", state}, []string{"FORCE_COLOR=1"}, piped},
		// Line-buffered, "a" is out before the C write of "b", as python3's.
		{"interleaving", []string{"-c", "import ctypes; print('a'); ctypes.CDLL(None).write(1, b'b\\n', 2); print('c')"}, nil, ""},
		{"--max-output", []string{"--max-output", "1000", "-c", state}, nil, piped},
		{"a script's cell changes what the next sees", []string{percent}, []string{"NO_COLOR=1"}, ""},
		// As the one-shot run's interpreter takes them from its
		// environment: they reached the session's as U+FFFD.
		{"bytes that are not UTF-8", []string{"-c", "import os; print(os.environb[b'TERM'], os.environb[b'NO_COLOR'])"},
			[]string{"TERM=xterm\xff", "NO_COLOR=\xfe"}, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := "tty" + string(rune('a'+i))
			pipedState := func() {
				t.Helper()
				cmd := h.cmd("run", "--session", session, "-c", state)
				out, errOut, code := runPipedToFile(t, cmd)
				if code != 0 || strings.TrimSpace(out) != piped {
					t.Errorf("piped: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, piped)
				}
			}
			pipedState() // the session's interpreter runs before the terminal's command
			oneShot := h.cmd(append([]string{"run"}, c.args...)...)
			oneShot.Env = append(oneShot.Env, c.env...)
			want, wantCode := cmdInTerminal(t, oneShot)
			attached := h.cmd(append([]string{"run", "--session", session}, c.args...)...)
			attached.Env = append(attached.Env, c.env...)
			got, code := cmdInTerminal(t, attached)
			if got != want || code != wantCode {
				t.Errorf("run --session at a terminal showed (exit %d)\n%q\na one-shot run there (exit %d)\n%q", code, got, wantCode, want)
			}
			if c.pipe != "" {
				pipedState()
			}
		})
	}
}

// On 3.13+ a script's uncaught error is coloured at a terminal, as
// python3 colours it, under --session as in a one-shot run; the same
// session piped into a file gets no escape sequence, FORCE_COLOR or not.
func TestRunSessionTerminalErrorsAsOneShot(t *testing.T) {
	python := testkit.PythonVersion(t, "3.13")
	h := newDaemonHome(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte("def f():\n    return 1/0\nf()\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name string
		env  []string // the terminal's commands'
		// The piped commands', the first of which starts the session's
		// interpreter: the colours follow the terminal's command, not it.
		startEnv []string
	}{
		{"TERM=xterm", nil, nil},
		{"FORCE_COLOR over TERM=dumb", []string{"TERM=dumb", "FORCE_COLOR=1"}, nil},
		{"NO_COLOR", []string{"NO_COLOR=1"}, nil},
		{"started with NO_COLOR", nil, []string{"NO_COLOR=1"}},
		{"started with TERM=dumb", nil, []string{"TERM=dumb"}},
		{"PYTHON_COLORS=0", []string{"PYTHON_COLORS=0", "FORCE_COLOR=1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "err" + string(rune('a'+i))
			cmd := func(env []string, args ...string) *exec.Cmd {
				c := h.cmd(args...)
				c.Dir = dir
				c.Env = append(withoutColorEnv(c.Env), env...)
				return c
			}
			pipedErr := func() {
				t.Helper()
				c := cmd(tc.startEnv, "run", "--session", session, "--python", python, "s.py")
				c.Env = append(c.Env, "FORCE_COLOR=1", "PYTHON_COLORS=1")
				out, errOut, code := runPipedToFile(t, c)
				if code != 1 || strings.Contains(out+errOut, "\x1b") || !strings.Contains(errOut, "ZeroDivisionError") {
					t.Errorf("piped: exit %d, stdout %q, stderr %q; want 1 and the report without escape sequences", code, out, errOut)
				}
			}
			pipedErr()
			want, wantCode := cmdInTerminal(t, cmd(tc.env, "run", "--python", python, "s.py"))
			got, code := cmdInTerminal(t, cmd(tc.env, "run", "--session", session, "--python", python, "s.py"))
			if got != want || code != wantCode {
				t.Errorf("run --session at a terminal showed (exit %d)\n%q\na one-shot run there (exit %d)\n%q", code, got, wantCode, want)
			}
			pipedErr()
		})
	}
}

// runPipedToFile runs cmd with its stdout and stderr in files, as
// `cmd >out 2>err`, and gives what they got.
func runPipedToFile(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	files := make([]*os.File, 2)
	for i, name := range []string{"out", "err"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running %s: %v", cmd.Path, err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return read("out"), read("err"), cmd.ProcessState.ExitCode()
}
