package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/proctree"
	"github.com/evalhost/evalhost/internal/testkit"
)

// inTerminal starts cmd as a shell starts a command in a terminal: its
// stdin, stdout and stderr term's, leading a session whose controlling
// terminal term is, so typed Ctrl-C signals it.
func inTerminal(t *testing.T, term *testkit.Terminal, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.Tty, term.Tty, term.Tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// waitStatus waits for cmd and says how it ended: "exit N" or "signal N".
func waitStatus(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

// waitReading waits until the Python interpreter at or below root (python3
// itself, or run's script's) waits for the terminal: its main thread in
// read(2), or in select(2) as readline's input() waits. A key typed before
// (Ctrl-C while readline sets the terminal up) can be lost by python3.
func waitReading(t *testing.T, root int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, pid := range append([]int{root}, descendants(root)...) {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if !strings.HasPrefix(string(comm), "python") {
				continue
			}
			if in, _, _ := testkit.InSyscall(pid, readingSyscalls...); in {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Python interpreter below %d ever waited to read", root)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// descendants lists the processes below pid.
func descendants(pid int) []int {
	var out []int
	kids, _ := proctree.Children(pid)
	for _, k := range kids {
		out = append(append(out, k), descendants(k)...)
	}
	return out
}

func termiosOf(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// TestRunTTYAsPython: with --tty a script asks the person at the terminal
// as under python3: what the terminal shows, typed keys and how the
// command ended are python3's, and the terminal is left as it was.
func TestRunTTYAsPython(t *testing.T) {
	for _, tc := range []struct {
		name, script, prompt, keys, shows string
	}{
		{"input", `import sys
print("tty", sys.stdin.isatty())
print("got", repr(input("name: ")))`, "name: ", "bob\r", "got 'bob'"},
		{"getpass does not echo", `import getpass
print("got", repr(getpass.getpass("pw: ")))`, "pw: ", "s3cret\r", "got 's3cret'"},
		{"the controlling terminal", `import os
fd = os.open("/dev/tty", os.O_RDWR)
os.write(fd, b"asked on /dev/tty: ")
print("got", repr(os.read(fd, 100)), os.ttyname(0) == os.ttyname(fd))`, "asked on /dev/tty: ", "yes\r", "got b'yes\\n'"},
		{"end of file", `try:
    input("name: ")
except EOFError:
    print("eof")`, "name: ", "\x04", "eof"},
		{"Ctrl-C in input", `input("name: ")`, "name: ", "\x03", "KeyboardInterrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "ask.py")
			if err := os.WriteFile(script, []byte(tc.script+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			run := func(cmd *exec.Cmd) (shown, status string) {
				term := testkit.NewTerminal(t)
				before := termiosOf(t, term.Tty)
				inTerminal(t, term, cmd)
				term.Await(tc.prompt)
				waitReading(t, cmd.Process.Pid)
				term.Type(tc.keys)
				status = waitStatus(t, cmd)
				term.Await(tc.shows)
				if after := termiosOf(t, term.Tty); after != before {
					t.Errorf("%s left the terminal's settings changed", cmd.Path)
				}
				return normalizeTTY(term.Shown(), script), status
			}
			wantShown, wantStatus := run(exec.Command(testkit.Python(t), script))
			gotShown, gotStatus := run(command(t, "run", "--tty", script))
			if gotShown != wantShown || gotStatus != wantStatus {
				t.Errorf("evalhost run --tty showed\n%q\n(%s); python3 showed\n%q\n(%s)", gotShown, gotStatus, wantShown, wantStatus)
			}
		})
	}
}

// normalizeTTY drops what differs between two runs of one script: the
// file's directory in a traceback.
func normalizeTTY(shown, script string) string {
	return strings.ReplaceAll(strings.ReplaceAll(shown, "\r\n", "\n"), script, "SCRIPT")
}

// interactiveBash starts bash as a person's shell in a terminal, in dir
// (its EVALHOST_HOME too); the function it returns runs a line and waits
// until it ran.
func interactiveBash(t *testing.T, term *testkit.Terminal, dir string) (*exec.Cmd, func(line string)) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
	cmd.Env = append(os.Environ(), "PS1=$ ", "TERM=dumb", "HISTFILE=/dev/null", "EVALHOST_HOME="+dir)
	cmd.Dir = dir
	inTerminal(t, term, cmd)
	n := 0
	return cmd, func(line string) {
		t.Helper()
		n++
		mark := strconv.Itoa(1000+n) + "x"
		term.Type(line + "; echo $((1000+" + strconv.Itoa(n) + "))x\r")
		term.Await(mark)
	}
}

// TestRunTTYStoppedAndContinued: in an interactive bash, Ctrl-Z stops a
// run --tty waiting for input, the shell has its terminal settings back,
// and fg continues the question where it was, as with python3.
func TestRunTTYStoppedAndContinued(t *testing.T) {
	dir := t.TempDir()
	term := testkit.NewTerminal(t)
	cmd, shell := interactiveBash(t, term, dir)
	shell("stty -g > before")
	term.Type(binary + ` run --tty -c 'print("got", repr(input("na" + "me> ")))'` + "\r")
	term.Await("name> ")
	waitReading(t, cmd.Process.Pid)
	term.Type("\x1a")
	term.Await("Stopped")
	shell("stty -g > stopped")
	term.Type("fg\r")
	waitReading(t, cmd.Process.Pid)
	term.Type("bob\r")
	term.Await("got 'bob'")
	shell("stty -g > after")
	term.Type("exit\r")
	if status := waitStatus(t, cmd); status != "exit 0" {
		t.Errorf("bash ended with %s; the terminal shows %q", status, term.Shown())
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if before := read("before"); read("stopped") != before || read("after") != before {
		t.Errorf("stty -g before %q, while stopped %q, after %q: want them equal", before, read("stopped"), read("after"))
	}
}

// TestRunTTYStoppedInBackground: a run --tty started in the background
// (&), or stopped by Ctrl-Z and continued there (bg; kill %1 sends
// SIGTERM and SIGCONT), runs on, or ends, as python3 does: it does not stop itself again by
// touching a terminal that is no longer its (SIGTTOU), and leaves the
// shell's settings as they are.
func TestRunTTYStoppedInBackground(t *testing.T) {
	for _, tc := range []struct {
		name, then string   // then: after Ctrl-Z; "&": started in the background
		shows      []string // one of them: bash tells a job's end by wait's status or by a notice
	}{
		{"bg", "bg", []string{"status 0"}},
		{"kill %1", "kill %1", []string{"status 143", "Terminated"}},
		{"started with &", "&", []string{"status 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			term := testkit.NewTerminal(t)
			cmd, shell := interactiveBash(t, term, dir)
			shell("stty -g > before")
			// The script waits, not reading, until the file go exists.
			term.Type(binary + ` run --tty -c 'import os, time
print("wait" + "ing")
while not os.path.exists("go"): time.sleep(0.01)
print("wo" + "ke")'`)
			if tc.then == "&" {
				term.Type(" &\r")
				term.Await("waiting")
			} else {
				term.Type("\r")
				term.Await("waiting")
				term.Type("\x1a")
				term.Await("Stopped")
				term.Type(tc.then + "\r")
			}
			shell("touch go; wait %1 2>/dev/null; echo status $?")
			shell("stty -g > after")
			if shown := term.Shown(); !strings.Contains(shown, tc.shows[0]) && !strings.Contains(shown, tc.shows[len(tc.shows)-1]) {
				t.Errorf("the terminal never showed %q, as for python3; it shows %q", tc.shows, shown)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "before"))
			a, _ := os.ReadFile(filepath.Join(dir, "after"))
			if string(a) != string(b) {
				t.Errorf("stty -g before %q, after %q: want them equal", b, a)
			}
			shell("kill -KILL %1 2>/dev/null; wait") // a job stopped for good would keep bash from exiting
			term.Type("exit\r")
			waitStatus(t, cmd)
		})
	}
}

func TestRunTTYRefused(t *testing.T) {
	h := newDaemonHome(t)
	for _, tc := range []struct {
		name  string
		cmd   *exec.Cmd
		stdin string
		want  string
	}{
		{"stdin is a pipe", command(t, "run", "--tty", "-c", "pass"), "x", "stdin is not one"},
		{"cells from stdin", command(t, "run", "--tty", "-"), "pass\n", "cells from stdin"},
		{"a session", h.cmd("run", "--tty", "--session", "s", "-c", "pass"), "", "--session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cmd.Stdin = strings.NewReader(tc.stdin)
			_, errOut, code := runCaptured(t, tc.cmd, false)
			if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--tty") {
				t.Errorf("exit %d, stderr %q; want 2 and an error naming --tty and %q", code, errOut, tc.want)
			}
		})
	}
}
