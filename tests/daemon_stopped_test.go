package tests

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A background process stopped (SIGSTOP) after it answered the hello, while
// a long cell of an attached run goes on, is found out by the run, which
// ends saying what to do instead of waiting for it; the same when the user
// presses Ctrl-C while it waits. Resumed, the process cancels what the
// command asked (it left) and its session keeps its state.
func TestDaemonStoppedDuringRunIsSaid(t *testing.T) {
	cases := []struct {
		name  string
		ctrlC bool
	}{
		{name: "waiting for a long cell"},
		{name: "after a Ctrl-C", ctrlC: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newDaemonHome(t)
			if _, stderr, code := h.run("run", "--session", "s", "-c", "kept = 1"); code != 0 {
				t.Fatal(stderr)
			}
			pid := h.pid("s")
			// A cell far longer than the bound; its timeout is the longest allowed.
			cmd, stderr := h.startRunning(t, "run", "--session", "s", "--timeout", "600", "-c", "import time\nprint('running', flush=True)\ntime.sleep(600)")
			stopProcess(t, pid)
			if tc.ctrlC {
				cmd.Process.Signal(syscall.SIGINT)
			}
			code := exitCodeOf(t, cmd)
			for _, want := range []string{
				fmt.Sprintf("the background process (pid %d) stopped answering", pid),
				fmt.Sprintf("kill -CONT %d", pid),
				fmt.Sprintf("kill %d", pid),
			} {
				if code != 1 || !strings.Contains(stderr.String(), want) {
					t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
				}
			}
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if out, stderr, code := h.run("run", "--session", "s", "-c", "kept"); code != 0 || out != "1\n" {
				t.Errorf("after SIGCONT: exit %d, stdout %q, stderr %s; want the session's state", code, out, stderr)
			}
		})
	}
}

// stopProcess stops pid with SIGSTOP and returns once it is stopped (state
// T in /proc, every thread of it), resuming it when the test ends.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	for !allStopped(t, pid) {
		time.Sleep(time.Millisecond) // no event tells a process stopped
	}
}

// allStopped says whether every thread of pid is stopped (state T).
func allStopped(t *testing.T, pid int) bool {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Skipf("no /proc to see the process stop: %v", err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false // a thread that ended meanwhile: look again
		}
		// The state follows the command name, which may hold spaces and ")".
		if fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(fields) == 0 || fields[0] != "T" {
			return false
		}
	}
	return true
}
