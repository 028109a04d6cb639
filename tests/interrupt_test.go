package tests

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// startRun starts `evalhost run -c CODE` and waits for its first stdout line.
func startRun(t *testing.T, code string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := command(t, append([]string{"run", "-c", code}, args...)...)
	stdout, stderr := testkit.StartPiped(t, cmd)
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
	return cmd, stderr
}

// shellStatus is a wait status as a shell reports it: 128+N for a death by
// signal N.
func shellStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// how says how a process ended, as a shell would tell it apart.
func how(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

func exitCodeOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return shellStatus(exit.Sys().(syscall.WaitStatus)) // a death by SIGINT is 130
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
	cmd, stderr := startRun(t, "import time\nprint('running', flush=True)\ntime.sleep(60)", "--grace", "20s", "-c", "print('later')")
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "KeyboardInterrupt") {
		t.Fatalf("stderr %q lacks the KeyboardInterrupt", stderr)
	}
	// The cell that never ran says so, without a duration it never had.
	if !strings.Contains(stderr.String(), "[cell 2 was not run: the run was cancelled before it started]\n") {
		t.Errorf("stderr %q lacks the second cell's line", stderr)
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

// Ctrl-\ (SIGQUIT) ends the run at once, as it ends python3: the cell's
// interpreter is killed without the grace window, and run dies of SIGQUIT
// (a shell's 131), not with Go's stack dump and 2.
func TestRunQuit(t *testing.T) {
	cmd, stderr := startRun(t, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\nwhile True: pass",
		"--grace", "5m")
	cmd.Process.Signal(syscall.SIGQUIT)
	if code := exitCodeOf(t, cmd); code != 131 {
		t.Fatalf("exit %d, want 131; stderr %s", code, stderr)
	}
	if strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("stderr has a Go stack dump:\n%s", stderr)
	}
}

// A run whose output cannot be written for another reason than a reader
// that left (a full disk) says so and fails (1), as python3's OSError does;
// 141 is a closed pipe's.
func TestRunOutputFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	cmd := command(t, "run", "-c", "for i in range(10**6): print(i)")
	cmd.Stdout = full
	var errb strings.Builder
	cmd.Stderr = &errb
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(errb.String(), "cannot write the output") {
		t.Fatalf("%v; stderr %q; want exit 1 saying the output could not be written", err, errb.String())
	}
}

// Whatever ends `evalhost run` early (a signal, or its output being closed
// as by `| head -1`), the processes the cell started end with it instead of
// being orphaned.
func TestRunEndsCellProcesses(t *testing.T) {
	const cell = "import subprocess, time\n" +
		"p = subprocess.Popen(['sleep', '300'])\n" +
		"print(p.pid, flush=True)\n" +
		"while True:\n    print('tick', flush=True)\n    time.sleep(0.05)\n"
	tests := []struct {
		name     string
		end      func(cmd *exec.Cmd, stdout io.Closer)
		wantCode int
	}{
		{"SIGINT", func(cmd *exec.Cmd, _ io.Closer) { cmd.Process.Signal(syscall.SIGINT) }, 130},
		// Passed on to the script, which dies of it, and so does run.
		{"SIGTERM", func(cmd *exec.Cmd, _ io.Closer) { cmd.Process.Signal(syscall.SIGTERM) }, 143},
		{"SIGHUP", func(cmd *exec.Cmd, _ io.Closer) { cmd.Process.Signal(syscall.SIGHUP) }, 129},
		{"output closed", func(_ *exec.Cmd, stdout io.Closer) { stdout.Close() }, 141},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := command(t, "run", "-c", cell)
			stdout, stderr := testkit.StartPiped(t, cmd)
			t.Cleanup(func() { cmd.Process.Kill() })
			r := bufio.NewReader(stdout)
			line, err := r.ReadString('\n')
			pid, _ := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || pid <= 0 {
				t.Fatalf("first line %q (%v), want the child's pid; stderr %s", line, err, stderr)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if tt.name != "output closed" {
				go io.Copy(io.Discard, r)
			}
			tt.end(cmd, stdout)
			if code := exitCodeOf(t, cmd); code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.wantCode, stderr)
			}
			// A reader that left is a pipeline's normal end: nothing more is
			// printed, not a complaint nor the cancelled cell's traceback.
			if tt.wantCode == 141 && stderr.Len() != 0 {
				t.Errorf("stderr %q; want nothing after the output closed", stderr)
			}
			if !leakcheck.Gone(pid, 10*time.Second) {
				t.Errorf("the cell's child process %d outlived evalhost run", pid)
			}
		})
	}
}
