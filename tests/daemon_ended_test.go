package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
				fmt.Sprintf("import os, time\nopen(%q, 'w').write(str(os.getpid()))\nprint('running', flush=True)\ntime.sleep(60)", pyFile))
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
			if !leakcheck.Gone(py, 10*time.Second) {
				t.Errorf("the cell's interpreter (pid %d) outlived its background process", py)
			}
		})
	}
}

// A jobs --wait whose background process is stopped says so, and that
// the job ended with it; it said "context canceled".
func TestDaemonEndedDuringJobWaitIsSaid(t *testing.T) {
	cases := []struct {
		name string
		want string
	}{
		{"daemon stop", "was stopped (evalhost daemon stop"},
	}
	// No SIGKILL row: nothing outside shows when the command has read the
	// hello, and a process killed before it is one "not running".
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
			var stderr strings.Builder
			waiter.Stderr = &stderr
			if err := waiter.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { waiter.Process.Kill() })
			// The wait is in once the command holds its connection (its
			// only socket): what the process does with it from then on
			// is the case, even a stop before the wait line is read.
			for deadline := time.Now().Add(10 * time.Second); socketsOf(t, waiter.Process.Pid) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("jobs --wait did not connect")
				}
			}
			if _, errOut, code := h.run("daemon", "stop"); code != 0 {
				t.Fatal(errOut)
			}
			code := exitCodeOf(t, waiter)
			for _, want := range []string{fmt.Sprintf("the background process (pid %d) %s", pid, tc.want), "job-1 ended with it"} {
				if code != 1 || !strings.Contains(stderr.String(), want) {
					t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, &stderr, want)
				}
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
