package tests

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startRun starts `evalhost run -c CODE` and waits for its first stdout line.
func startRun(t *testing.T, code string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := command(t, append([]string{"run", "-c", code}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
		for sc.Scan() {
		}
	}()
	select {
	case l := <-line:
		if l != "running" {
			t.Fatalf("first line %q, want running", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cell never started")
	}
	return cmd, &stderr
}

func exitCodeOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatal("evalhost run did not exit")
		return -1
	}
}

// The first Ctrl-C interrupts the running cell; the interpreter stays
// usable, so the cell reports KeyboardInterrupt and run exits 130.
func TestRunFirstInterrupt(t *testing.T) {
	// A grace far past any scheduling delay: on a loaded CI machine the
	// default 2 s once ran out before the traceback was written.
	cmd, stderr := startRun(t, "import time\nprint('running', flush=True)\ntime.sleep(60)", "--grace", "20s")
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "KeyboardInterrupt") {
		t.Fatalf("stderr %q lacks the KeyboardInterrupt", stderr)
	}
}

// A cell that ignores SIGINT is killed by the second Ctrl-C, without
// waiting out the grace window (set far longer than exitCodeOf waits).
func TestRunSecondInterruptKills(t *testing.T) {
	cmd, stderr := startRun(t, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\nwhile True: pass",
		"--grace", "5m")
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, stderr)
	}
}
