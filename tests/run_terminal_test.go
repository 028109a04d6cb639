package tests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A one-shot run whose output goes to a terminal tells its Python cells
// so, as python3's streams would (libraries colour and size their output
// by it): sys.stdout.isatty() and the terminal's size; the fds stay pipes.
// Not under --json or --max-output, whose output is not the cells' bytes.
func TestRunTellsCellsOfATerminal(t *testing.T) {
	const code = "import sys, shutil, os; print(sys.stdout.isatty(), sys.stderr.isatty(), *shutil.get_terminal_size(), os.isatty(1))"
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"terminal", []string{"run", "-c", code}, nil, "True True 100 30 False"},
		{"COLUMNS set by the user", []string{"run", "-c", code}, []string{"COLUMNS=61"}, "True True 61 30 False"},
		{"--max-output", []string{"run", "--max-output", "1000", "-c", code}, nil, "False False 80 24 False"},
		// The runner's own word: neither a sh cell nor a cell's child sees it.
		{"sh cells are not told", []string{"run", "--language", "sh", "-c", "echo tty=${EVALHOST_TTY-unset}"}, nil, "tty=unset"},
		{"a child is not told", []string{"run", "-c", "import subprocess; r = subprocess.run(['sh', '-c', 'echo tty=${EVALHOST_TTY-unset}'])"},
			nil, "tty=unset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := runInTerminal(t, c.env, c.args...)
			if code != 0 || !strings.Contains(got, c.want) {
				t.Errorf("exit %d, output %q, want %q", code, got, c.want)
			}
		})
	}
	t.Run("pipe", func(t *testing.T) {
		out, errOut, code := runEvalhost(t, "", "run", "-c", code)
		if code != 0 || strings.TrimSpace(out) != "False False 80 24 False" {
			t.Errorf("exit %d, output %q, stderr %q", code, out, errOut)
		}
	})
}

// What a cell printed just before its interpreter died is kept: os._exit
// flushes first (python3 loses what its buffer held), and stdout on a
// terminal is line-buffered as python3's, so a print before a segfault
// shows there.
func TestRunKeepsWhatWasPrintedBeforeADeath(t *testing.T) {
	const segv = "print('before'); import ctypes; ctypes.string_at(0)"
	cases := []struct {
		name     string
		code     string
		env      []string
		terminal bool
	}{
		{"os._exit", "print('before'); import os; os._exit(3)", []string{"PYTHONUNBUFFERED="}, false},
		{"segfault on a terminal", segv, []string{"PYTHONUNBUFFERED="}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := command(t, "run", "-c", c.code)
			cmd.Env = append(cmd.Environ(), c.env...)
			var out bytes.Buffer
			if c.terminal {
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Skipf("no pty: %v", err)
				}
				defer ptmx.Close()
				cmd.Stdout, cmd.Stderr = tty, io.Discard
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				tty.Close()
				io.Copy(&out, ptmx)
				cmd.Wait()
			} else {
				cmd.Stdout = &out
				cmd.Run()
			}
			if !strings.Contains(out.String(), "before") {
				t.Errorf("stdout %q lost the print before the death", out.String())
			}
		})
	}
}

// python3 line-buffers a stdout that is a terminal, so a line printed
// before os._exit(N) (or a crash) is on the screen; run's cells see a
// terminal there (isatty) and must keep their lines as python3 does.
func TestRunTerminalStdoutIsLineBuffered(t *testing.T) {
	got, code := runInTerminal(t, nil, "run", "-c", "import os; print('a'); os._exit(3)")
	if code != 3 || got != "a" {
		t.Errorf("exit %d, output %q; want python3's 3 and \"a\"", code, got)
	}
}

// runInTerminal runs evalhost with a 100x30 terminal as its stdout and
// stderr, and gives what it showed there (trimmed, "\n" ends) and its exit
// code.
func runInTerminal(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := command(t, args...)
	cmd.Env = append(cmd.Environ(), env...)
	return cmdInTerminal(t, cmd)
}

// cmdInTerminal is runInTerminal for any command (python3's, side by side);
// a cmd.Stderr already set is left as it is.
func cmdInTerminal(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = tty
	if cmd.Stderr == nil {
		cmd.Stderr = tty
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	io.Copy(&out, ptmx) // to EIO once the run and its children closed the terminal
	var exit *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v\n%s", cmd.Path, err, out.String())
	}
	return strings.TrimSpace(strings.ReplaceAll(out.String(), "\r\n", "\n")), cmd.ProcessState.ExitCode()
}

// TestRunTerminalErrorsAsPython: on a terminal python3 3.13+ colours the
// reports of errors it prints itself (an uncaught exception's traceback, a
// SyntaxError, a thread's exception; not an unraisable one), as its
// _colorize.can_colorize says (NO_COLOR, PYTHON_COLORS, FORCE_COLOR,
// TERM=dumb, whether stderr is a terminal): run shows what python3 shows
// there, byte for byte. Earlier versions print them plain, as run does.
func TestRunTerminalErrorsAsPython(t *testing.T) {
	const raises = "def f():\n    return 1/0\nf()\n"
	for _, tc := range []struct {
		name, script string
		env          []string
		stderrPipe   bool // stdout alone on the terminal
	}{
		{"uncaught", raises, nil, false},
		{"chained", "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad') from e\n", nil, false},
		{"with a note and a limit", "import sys\nsys.tracebacklimit = 1\ne = TypeError('t')\ne.add_note('a note')\ndef g():\n    raise e\ng()\n", nil, false},
		{"a suggestion", "import collections\ncollections.OrderedDic\n", nil, false},
		{"syntax error", "x = (1 +\n", nil, false},
		{"a thread's", "import threading\nt = threading.Thread(target=lambda: 1/0)\nt.start(); t.join()\nprint('after')\n", nil, false},
		{"unraisable", "class A:\n    def __del__(self): raise ValueError('x')\nA()\nprint('after')\n", nil, false},
		{"NO_COLOR", raises, []string{"NO_COLOR=1"}, false},
		{"PYTHON_COLORS=0", raises, []string{"PYTHON_COLORS=0", "FORCE_COLOR=1"}, false},
		{"PYTHON_COLORS=1 over NO_COLOR", raises, []string{"PYTHON_COLORS=1", "NO_COLOR=1"}, false},
		{"TERM=dumb", raises, []string{"TERM=dumb"}, false},
		{"FORCE_COLOR over TERM=dumb", raises, []string{"TERM=dumb", "FORCE_COLOR=1"}, false},
		{"stderr not a terminal", raises, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte(tc.script), 0o600); err != nil {
				t.Fatal(err)
			}
			python := testkit.Python(t)
			show := func(cmd *exec.Cmd) (string, int) {
				cmd.Dir = dir
				cmd.Env = append(withoutColorEnv(cmd.Environ()), tc.env...)
				if !tc.stderrPipe {
					return cmdInTerminal(t, cmd)
				}
				var errOut strings.Builder
				cmd.Stderr = &errOut
				shown, code := cmdInTerminal(t, cmd)
				return shown + "\n--- stderr\n" + errOut.String(), code
			}
			want, wantCode := show(exec.Command(python, "s.py"))
			cmd := command(t, "run", "--python", python, "s.py")
			primeBytecode(t, cmd.Env, python)
			got, code := show(cmd)
			got, want = addresses.ReplaceAllString(got, "0x?"), addresses.ReplaceAllString(want, "0x?")
			if got != want || code != wantCode {
				t.Errorf("evalhost run showed (exit %d)\n%q\npython3 showed (exit %d)\n%q", code, got, wantCode, want)
			}
		})
	}
}

// Where run's output is not all on a terminal (pipes: an agent's; or
// stderr alone a pipe), an error's report has no escape sequences, whatever
// FORCE_COLOR or PYTHON_COLORS say, where python3 3.13+ would colour it:
// they reach the interpreter only when stdout and stderr are a terminal.
func TestRunColoursNoPipe(t *testing.T) {
	const script = "import threading\nt = threading.Thread(target=lambda: 1/0)\nt.start(); t.join()\n" +
		"def f():\n    return 1/0\nf()\n"
	env := []string{"FORCE_COLOR=1", "PYTHON_COLORS=1"}
	t.Run("pipes", func(t *testing.T) {
		cmd := command(t, "run", "-c", script)
		cmd.Env = append(withoutColorEnv(cmd.Environ()), env...)
		out, errOut, code := runCaptured(t, cmd, false)
		if code != 1 || strings.Contains(out+errOut, "\x1b") || !strings.Contains(errOut, "ZeroDivisionError") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1 and the reports without escape sequences", code, out, errOut)
		}
	})
	t.Run("stderr a pipe", func(t *testing.T) {
		cmd := command(t, "run", "-c", script)
		cmd.Env = append(withoutColorEnv(cmd.Environ()), env...)
		var errOut strings.Builder
		cmd.Stderr = &errOut
		shown, code := cmdInTerminal(t, cmd)
		if code != 1 || strings.Contains(errOut.String(), "\x1b") || !strings.Contains(errOut.String(), "ZeroDivisionError") {
			t.Errorf("exit %d, terminal %q, stderr %q; want 1 and the reports without escape sequences", code, shown, errOut.String())
		}
	})
}

// addresses are what differs between two runs' reports of one object.
var addresses = regexp.MustCompile(`0x[0-9a-f]+`)

// withoutColorEnv is env without what python3's _colorize reads but
// TERM=xterm: the cases set what they test.
func withoutColorEnv(env []string) []string {
	out := []string{"TERM=xterm"}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TERM", "NO_COLOR", "FORCE_COLOR", "PYTHON_COLORS":
		default:
			out = append(out, kv)
		}
	}
	return out
}
