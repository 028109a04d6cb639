package tests

import (
	"bytes"
	"io"
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			defer ptmx.Close()
			if err := pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30}); err != nil {
				t.Fatal(err)
			}
			cmd := command(t, c.args...)
			cmd.Env = append(cmd.Environ(), c.env...)
			cmd.Stdout, cmd.Stderr = tty, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			var out bytes.Buffer
			io.Copy(&out, ptmx) // to EIO once the run and its children closed the terminal
			if err := cmd.Wait(); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if got := strings.TrimSpace(strings.ReplaceAll(out.String(), "\r\n", "\n")); !strings.Contains(got, c.want) {
				t.Errorf("output %q, want %q", got, c.want)
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
