package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Ctrl-Z stops an attached run's cell with the run, as it stops a one-shot
// run's interpreter: the session's interpreter is stopped while run is,
// the cell's timeout does not count that time, and fg continues both. A
// run killed while stopped leaves its session's interpreter continued:
// the cell is cancelled and the session keeps its state.
func TestDaemonJobControl(t *testing.T) {
	h := newDaemonHome(t)
	if _, stderr, code := h.run("run", "--session", "s", "-c", "kept = 1"); code != 0 {
		t.Fatal(stderr)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cell := func(sleep string) string {
		return "import os, time\nopen(" + strconv.Quote(pidFile) + ", 'w').write(str(os.getpid()))\n" +
			"print('running', flush=True)\ntime.sleep(" + sleep + ")\nprint('end')"
	}
	interpreter := func() int {
		b, err := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			t.Fatalf("the cell's pid: %q %v", b, err)
		}
		return pid
	}

	cmd := asJob(h.cmd("run", "--session", "s", "--timeout", "2", "-c", cell("1.5")))
	cmd, stderr := h.startCmdRunning(t, cmd)
	py := interpreter()
	cmd.Process.Signal(syscall.SIGTSTP)
	testkit.WaitState(t, cmd.Process.Pid, 'T')
	testkit.WaitState(t, py, 'T')
	// Stopped past the cell's timeout: that time is not the cell's.
	time.Sleep(2500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGCONT)
	if code := exitCodeOf(t, cmd); code != 0 {
		t.Fatalf("after fg: exit %d, want 0 (the cell's 1.5 s within its 2 s); stderr %s", code, stderr)
	}

	cmd, _ = h.startCmdRunning(t, asJob(h.cmd("run", "--session", "s", "-c", cell("30"))))
	py = interpreter()
	cmd.Process.Signal(syscall.SIGTSTP)
	testkit.WaitState(t, py, 'T')
	cmd.Process.Kill()
	cmd.Wait()
	testkit.WaitState(t, py, 0)
	if out, stderr, code := h.run("run", "--session", "s", "-c", "print(kept)"); code != 0 || out != "1\n" {
		t.Fatalf("after a run killed while stopped: exit %d, stdout %q, stderr %s; want the session kept", code, out, stderr)
	}
}
