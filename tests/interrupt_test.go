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

// A run whose stdout cannot be written (a full disk: /dev/full) exits as
// python3's OSError makes it exit (1), and says so in one line naming the
// failed write, nothing else: not the interrupt that stopped the script
// (its KeyboardInterrupt traceback, a handler's output, "[cell 1 was
// cancelled]"). python3 raises at the print itself, and its traceback
// shows that line; run learns of the failure after the interpreter's write
// into run's pipe succeeded, so it stops the script where it has got to.
// 141 and silence are a closed pipe's (TestRunEndsCellProcesses).
func TestRunOutputFullExitsAsPython(t *testing.T) {
	dir := t.TempDir()
	const said = "evalhost run: cannot write stdout: no space left on device; the script was stopped\n"
	unbuffered := []string{"PYTHONUNBUFFERED=1"}
	cases := []struct {
		name string
		src  string
		env  []string // both commands'
		code int      // run's status where python3's differs (0: python3's)
	}{
		{"a print past python3's buffer", "print('x' * 100000)\nprint('not run')\n", nil, 0},
		{"prints in a loop", "for i in range(10**6): print(i)\n", nil, 0},
		{"a small print, unbuffered", "print('hi')\n", unbuffered, 0},
		{"sys.exit(main()) after prints", "import sys\ndef main():\n    for i in range(3): print(i)\n    return 0\nsys.exit(main())\n", unbuffered, 0},
		{"printed, then waiting", "import time\nprint('hi')\ntime.sleep(60)\n", unbuffered, 0},
		{"a script that takes Ctrl-C", "import sys, time\ntry:\n    print('hi')\n    time.sleep(60)\n" +
			"except KeyboardInterrupt:\n    print('caught', file=sys.stderr)\n    sys.exit(130)\n", unbuffered, 0},
		// python3's buffered stdout fails at its exit's flush too (the text
		// a failed flush kept): "Exception ignored in <stdout>" and 120.
		// run's failed write is its own, of text the interpreter gave it;
		// on 3.14+, where every buffered row above ends so too (a long
		// print does not even raise), run exits 120 as python3 does.
		{"a small print, buffered", "print('hi')\n", nil, exitFailed},
		{"a flushed print, buffered", "import time\nprint('hi', flush=True)\ntime.sleep(60)\n", nil, exitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, dir, strings.ReplaceAll(c.name, " ", "_")+".py", c.src)
			cmd := command(t, "run", script)
			cmd.Env = append(cmd.Env, c.env...)
			py := pythonCmd(t, script)
			py.Env = append(os.Environ(), c.env...)
			_, pyCode := runToFull(t, py)
			errOut, code := runToFull(t, cmd)
			want := c.code
			if want == 0 || testkit.PythonAtLeast(t, 3, 14) {
				want = pyCode
			}
			if code != want || errOut != said {
				t.Errorf("exit %d, stderr %q; want %d (python3's %d) and %q", code, errOut, want, pyCode, said)
			}
		})
	}
	t.Run("--session", func(t *testing.T) {
		h := newDaemonHome(t)
		script := writeScript(t, dir, "session.py", "import time\nprint('hi', flush=True)\ntime.sleep(60)\n")
		errOut, code := runToFull(t, h.cmd("run", "--session", "full", script))
		if code != exitFailed || errOut != said {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, said)
		}
	})
}

// exitFailed is run's status for a failure (python3's for an uncaught error).
const exitFailed = 1

// runToFull runs cmd with its stdout on /dev/full, and returns its stderr
// and exit status as a shell reports it.
func runToFull(t *testing.T, cmd *exec.Cmd) (stderr string, code int) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = full, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code = exitCodeOf(t, cmd)
	return errb.String(), code
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
			if !leakcheck.Gone(pid, hangBound) {
				t.Errorf("the cell's child process %d outlived evalhost run", pid)
			}
		})
	}
}

// A script that ends itself by sys.exit(text) when Ctrl-C interrupts it
// (except KeyboardInterrupt: sys.exit(...)) shows the message where
// python3 does, before what its atexit handlers print, and exits 1.
func TestRunInterruptEndsBySysExit(t *testing.T) {
	// 'running' is printed inside the try: the interrupt is sent once it is
	// read, which can be before print returns.
	code := "import atexit, sys, time\natexit.register(print, 'at exit', file=sys.stderr)\n" +
		"try:\n    print('running', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit('stopped')\n"
	cmd, stderr := startRun(t, code)
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 1 || stderr.String() != "stopped\nat exit\n" {
		t.Fatalf("exit %d, stderr %q; want 1 and python3's %q", code, stderr, "stopped\nat exit\n")
	}
}
