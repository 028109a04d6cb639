package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// The background process ends while a command relies on it: the command
// says what ended it and that the session's state is lost, and exits 1.
// Before, a daemon stop showed as a Ctrl-C nobody pressed (a
// KeyboardInterrupt, exit 130) and a SIGKILL as "ended before the run
// did: EOF", neither naming the loss. Nothing the cell started is left.
func TestDaemonEndedDuringRunIsSaid(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, h *daemonHome, pid int)
		want string // after "the background process (pid N) "
	}{
		{"daemon stop", func(t *testing.T, h *daemonHome, pid int) {
			if _, stderr, code := h.run("daemon", "stop"); code != 0 {
				t.Fatal(stderr)
			}
		}, "was stopped (evalhost daemon stop"},
		{"SIGTERM", func(t *testing.T, h *daemonHome, pid int) { syscall.Kill(pid, syscall.SIGTERM) }, "was stopped by a signal"},
		{"SIGKILL", func(t *testing.T, h *daemonHome, pid int) { syscall.Kill(pid, syscall.SIGKILL) }, "ended without a stop (killed or crashed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newDaemonHome(t)
			pid := h.pid("s")
			pyFile := filepath.Join(h.home, "py.pid")
			cmd, stderr := h.startRunning(t, "run", "--session", "s", "-c",
				fmt.Sprintf("import os, time\nopen(%q, 'w').write(str(os.getpid()))\nprint('running', flush=True)\ntime.sleep(600)", pyFile))
			b, err := os.ReadFile(pyFile)
			if err != nil {
				t.Fatal(err)
			}
			py, _ := strconv.Atoi(string(b))
			tc.end(t, h, pid)
			code := exitCodeOf(t, cmd)
			for _, want := range []string{fmt.Sprintf("the background process (pid %d) %s", pid, tc.want), "the state of session s is lost"} {
				if code != 1 || !strings.Contains(stderr.String(), want) {
					t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
				}
			}
			if !leakcheck.Gone(py, hangBound) {
				t.Errorf("the cell's interpreter (pid %d) outlived its background process", py)
			}
		})
	}
}

// A jobs --wait whose background process ends says so, and that the job
// ended with it and its session's state; it said "context canceled". It is
// the one told: the session's next command is not told again (after a
// SIGKILL too, which no word of the process's kept out of lost.json), while
// a session nobody waited on still is, once.
func TestDaemonEndedDuringJobWaitIsSaid(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, h *daemonHome, pid int)
		want string
	}{
		{"daemon stop", func(t *testing.T, h *daemonHome, pid int) {
			if _, errOut, code := h.run("daemon", "stop"); code != 0 {
				t.Fatal(errOut)
			}
		}, "was stopped (evalhost daemon stop"},
		{"SIGKILL", func(t *testing.T, h *daemonHome, pid int) { syscall.Kill(pid, syscall.SIGKILL) }, "ended without a stop (killed or crashed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newDaemonHome(t)
			pid := h.pid("other")
			flag := filepath.Join(h.home, "flag")
			if _, stderr, code := h.run("run", "--session", "j", "--timeout", "1", "--detach", "-c", waitForFlag(flag)); code != 0 {
				t.Fatal(stderr)
			}
			waiter := h.cmd("jobs", "job-1", "--wait")
			waiter.Env = append(waiter.Env, "EVALHOST_DEBUG=1") // its timeline marks the wait taken
			pipe, err := waiter.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := waiter.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { waiter.Process.Kill() })
			var stderr strings.Builder
			sc := bufio.NewScanner(pipe)
			for !strings.Contains(stderr.String(), " waiting op=wait job=job-1") {
				if !sc.Scan() {
					t.Fatalf("jobs --wait ended before its wait was taken: %s", &stderr)
				}
				stderr.WriteString(sc.Text() + "\n")
			}
			tc.end(t, h, pid)
			for sc.Scan() {
				stderr.WriteString(sc.Text() + "\n")
			}
			code := exitCodeOf(t, waiter)
			for _, want := range []string{fmt.Sprintf("the background process (pid %d) %s", pid, tc.want),
				"job-1 ended with it, and the state of its session j is lost"} {
				if code != 1 || !strings.Contains(stderr.String(), want) {
					t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, &stderr, want)
				}
			}
			waitGone(t, pid)
			if _, errOut, _ := h.run("run", "--session", "j", "-c", "1"); strings.Contains(errOut, "lost") {
				t.Errorf("session j, whose loss jobs --wait told, was told again: %s", errOut)
			}
			if _, errOut, _ := h.run("run", "--session", "other", "-c", "1"); strings.Count(errOut, "lost") != 1 || !strings.Contains(errOut, "[state lost: session other's") {
				t.Errorf("session other: stderr %q; want its loss told once", errOut)
			}
		})
	}
}

// socketsOf counts pid's open sockets.
func socketsOf(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// A command told that a stop took its session's state is the one told:
// the session's next command is not told again ("no one is told twice"),
// while a session no command ran in at the stop still is.
func TestDaemonStopToldOnce(t *testing.T) {
	h := newDaemonHome(t)
	for _, s := range []string{"ran", "idle"} {
		if _, stderr, code := h.run("run", "--session", s, "-c", "x = 1"); code != 0 {
			t.Fatal(stderr)
		}
	}
	cmd, stderr := h.startRunning(t, "run", "--session", "ran", "-c", "import time\nprint('running', flush=True)\ntime.sleep(60)")
	if _, errOut, code := h.run("daemon", "stop"); code != 0 {
		t.Fatal(errOut)
	}
	if code := exitCodeOf(t, cmd); code != 1 || !strings.Contains(stderr.String(), "the state of session ran is lost") {
		t.Fatalf("the running command: exit %d, stderr %q", code, stderr)
	}
	if _, errOut, _ := h.run("run", "--session", "ran", "-c", "1"); strings.Contains(errOut, "state lost") {
		t.Errorf("the session whose command was told was told again: %s", errOut)
	}
	if _, errOut, _ := h.run("run", "--session", "idle", "-c", "1"); !strings.Contains(errOut, "[state lost: session idle's") {
		t.Errorf("the idle session was not told: %q", errOut)
	}
}

// A command told that a SIGKILL of the background process took its
// session's state is the one told: the session's next command is not
// told again (the command that found the dead process named it, and its
// next cell said so too), while a session no command ran in is told once.
// Each of several commands running then is the one told of its own
// session: the first to clear what the process left kept only its own out
// of lost.json, and the others' sessions were told again.
func TestDaemonKilledToldOnce(t *testing.T) {
	h := newDaemonHome(t)
	for _, s := range []string{"ran", "also", "idle"} {
		if _, stderr, code := h.run("run", "--session", s, "-c", "x = 1"); code != 0 {
			t.Fatal(stderr)
		}
	}
	pid := h.pid("ran")
	running := map[string]*exec.Cmd{}
	stderrs := map[string]*strings.Builder{}
	for _, s := range []string{"ran", "also"} {
		running[s], stderrs[s] = h.startRunning(t, "run", "--session", s, "-c", "import time\nprint('running', flush=True)\ntime.sleep(60)")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for s, cmd := range running {
		if code := exitCodeOf(t, cmd); code != 1 || !strings.Contains(stderrs[s].String(), "the state of session "+s+" is lost") {
			t.Fatalf("the command running in %s: exit %d, stderr %q", s, code, stderrs[s])
		}
	}
	waitGone(t, pid)
	for s := range running {
		if _, errOut, _ := h.run("run", "--session", s, "-c", "1"); strings.Contains(errOut, "lost") {
			t.Errorf("session %s, whose command was told, was told again: %s", s, errOut)
		}
	}
	_, errOut, _ := h.run("run", "--session", "idle", "-c", "1")
	if strings.Count(errOut, "lost") != 1 || !strings.Contains(errOut, "[state lost: session idle's") {
		t.Errorf("the idle session: stderr %q; want its loss told once", errOut)
	}
}
