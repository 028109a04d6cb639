package tests

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
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

// cmdInTerminal is runInTerminal for any command (python3's, side by side).
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
	cmd.Stdout, cmd.Stderr = tty, tty
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
