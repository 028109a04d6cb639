package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// waitingScript prints its pid, then blocks in os.read on a pipe that only
// a handler writes to (w; read(2), whatever the Python version), where the
// test's signal is sure to land; before sets handlers, around (with WAIT
// where the wait goes) wraps it.
func waitingScript(before, around string) string {
	body := "print(os.getpid(), flush=True)\nos.read(r, 1)\n"
	if around != "" {
		body = strings.ReplaceAll(around, "WAIT\n", indent(body))
	}
	return "import os, signal, sys, time\nr, w = os.pipe()\n" + before + body
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// signalEnd is how a command that was sent a signal ended: what it wrote,
// and its wait status.
type signalEnd struct {
	stdout, stderr string
	ws             syscall.WaitStatus
}

// signalled starts cmd, waits until the Python process whose pid it prints
// first is blocked in read(2), sends send to it (cmd's process), and
// returns how it ended.
func signalled(t *testing.T, cmd *exec.Cmd, send func(cmd *exec.Cmd, pid int)) signalEnd {
	t.Helper()
	w := startWaiting(t, cmd)
	send(cmd, w.pid)
	rest, ok := readAllWithin(w.r, time.Minute)
	if !ok {
		// a hang: say what both processes were doing (their signals
		// pending, blocked and caught) before they are killed
		t.Fatalf("the command's output did not end; %s%s", procSignals(cmd.Process.Pid), procSignals(w.pid))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not end")
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return signalEnd{stdout: string(rest), stderr: w.stderr.String(), ws: cmd.ProcessState.Sys().(syscall.WaitStatus)}
}

// readAllWithin reads r to its end, or gives up after d (false).
func readAllWithin(r io.Reader, d time.Duration) ([]byte, bool) {
	type read struct{ b []byte }
	ch := make(chan read, 1)
	go func() {
		b, _ := io.ReadAll(r)
		ch <- read{b}
	}()
	select {
	case got := <-ch:
		return got.b, true
	case <-time.After(d):
		return nil, false
	}
}

// procSignals is process pid's state and signal masks (/proc/PID/status).
func procSignals(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return fmt.Sprintf("\nprocess %d: %v", pid, err)
	}
	out := fmt.Sprintf("\nprocess %d:", pid)
	for _, line := range strings.Split(string(b), "\n") {
		for _, key := range []string{"Name:", "State:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:"} {
			if strings.HasPrefix(line, key) {
				out += " " + strings.Join(strings.Fields(line), " ")
			}
		}
	}
	return out
}

// waiting is a command started by startWaiting: its stdout, read past the
// pid line by r, and its stderr.
type waiting struct {
	stdout io.ReadCloser
	r      *bufio.Reader
	pid    int
	stderr *strings.Builder
}

// startWaiting starts cmd (a waitingScript's) and returns once the Python
// process whose pid it prints first is blocked in read(2), where a signal
// is sure to land.
func startWaiting(t *testing.T, cmd *exec.Cmd) waiting {
	t.Helper()
	stdout, stderr := testkit.StartPiped(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	pid := waitForPid(t, cmd, r, stderr)
	return waiting{stdout: stdout, r: r, pid: pid, stderr: stderr}
}

// waitForPid reads from r the pid a waitingScript prints first and returns
// it once that process is blocked in read(2).
func waitForPid(t *testing.T, cmd *exec.Cmd, r *bufio.Reader, stderr fmt.Stringer) int {
	t.Helper()
	line, err := r.ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q (%v), want a pid; stderr %s", line, err, stderr)
	}
	testkit.WaitSyscall(t, pid, syscall.SYS_READ)
	return pid
}

func sendSignal(sig syscall.Signal) func(*exec.Cmd, int) {
	return func(cmd *exec.Cmd, _ int) { cmd.Process.Signal(sig) }
}

// A signal sent to `evalhost run` does to the script what it does to
// python3 running it: SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 reach the
// script's handlers or end it by their default action, and run then dies
// of the same signal (its parent sees it so); Ctrl-C's KeyboardInterrupt
// may be caught and handled for as long as the script needs (not cut at
// --grace), and an uncaught one kills the run by SIGINT. Each row is
// compared with python3's stdout, stderr and wait status.
func TestRunSignalsAsPython(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		src   string
		sig   syscall.Signal
		flags []string // run's, before the script
	}{
		{"SIGINT uncaught", waitingScript("", ""), syscall.SIGINT, nil},
		{"SIGINT caught, handled past the grace window", waitingScript("",
			"try:\nWAIT\nexcept KeyboardInterrupt:\n    print('saving', flush=True)\n    time.sleep(2.5)\n    print('saved')\n"),
			syscall.SIGINT, nil},
		{"SIGINT caught, sys.exit(3)", waitingScript("", "try:\nWAIT\nexcept KeyboardInterrupt:\n    sys.exit(3)\n"), syscall.SIGINT, nil},
		{"SIGTERM without a handler", waitingScript("", ""), syscall.SIGTERM, nil},
		{"SIGTERM handler exits", waitingScript("def h(n, f):\n    print('handler', n)\n    sys.exit(5)\nsignal.signal(signal.SIGTERM, h)\n", ""),
			syscall.SIGTERM, nil},
		{"SIGTERM handler, then on", waitingScript("signal.signal(signal.SIGTERM, lambda n, f: print('handled', n, os.write(w, b'x')))\n", "") + "print('after')\n",
			syscall.SIGTERM, nil},
		{"SIGHUP without a handler", waitingScript("", ""), syscall.SIGHUP, nil},
		{"SIGUSR1 handler", waitingScript("signal.signal(signal.SIGUSR1, lambda n, f: print('usr1', n, os.write(w, b'x')))\n", "") + "print('after')\n",
			syscall.SIGUSR1, nil},
		{"SIGUSR2 without a handler", waitingScript("", ""), syscall.SIGUSR2, nil},
		// A percent script goes on past the cell that took it, as python3
		// goes on past the except.
		{"SIGINT caught, the later cells run", "# %%\n" + waitingScript("", "try:\nWAIT\nexcept KeyboardInterrupt:\n    print('stopping early')\n") +
			"# %%\nprint('saving')\n", syscall.SIGINT, nil},
		{"SIGINT caught, a later cell fails", "# %%\n" + waitingScript("", "try:\nWAIT\nexcept KeyboardInterrupt:\n    print('stopping early')\n") +
			"# %%\nraise SystemError('later')\n", syscall.SIGINT, nil},
		// No limit: the wait for the script's handling has no deadline
		// either (it was killed at once, its time being "out").
		{"SIGINT uncaught, --timeout 0", waitingScript("", ""), syscall.SIGINT, []string{"--timeout", "0"}},
		{"SIGINT caught, handled past the grace window, --timeout 0", waitingScript("",
			"try:\nWAIT\nexcept KeyboardInterrupt:\n    print('saving', flush=True)\n    time.sleep(2.5)\n    print('saved')\n"),
			syscall.SIGINT, []string{"--timeout", "0"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			signalledAsPython(t, writeScript(t, dir, fmt.Sprintf("s%d.py", i), tc.src), tc.sig, tc.flags...)
		})
	}
}

// signalledAsPython runs script under evalhost run and under python3, sends
// each sig once the script waits (signalled), and fails t where their
// stdout, stderr or ending differ; flags are run's, before the script.
func signalledAsPython(t *testing.T, script string, sig syscall.Signal, flags ...string) {
	t.Helper()
	got := signalled(t, command(t, append(append([]string{"run"}, flags...), script)...), sendSignal(sig))
	want := signalled(t, pythonCmd(t, script), sendSignal(sig))
	if got.stdout != want.stdout || got.stderr != want.stderr {
		t.Errorf("stdout %q, stderr %q; python3 printed %q, %q", got.stdout, got.stderr, want.stdout, want.stderr)
	}
	if how(got.ws) != how(want.ws) {
		t.Errorf("run ended %s, python3 %s", how(got.ws), how(want.ws))
	}
}

// A shell loop stops at Ctrl-C when the command it runs dies of SIGINT, as
// python3 does after an uncaught KeyboardInterrupt; one that exited 130
// looks to bash as if it handled the interrupt, and the loop went on.
func TestRunCtrlCStopsAShellLoop(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := writeScript(t, t.TempDir(), "loop.py", waitingScript("if sys.argv[1] == '2':\n    sys.exit(0)\n", ""))
	for _, tc := range []struct{ name, cmd string }{
		{"evalhost run", binary + " run"},
		{"python3", "python3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loop := exec.Command("bash", "-c", "for i in 1 2; do "+tc.cmd+" "+script+" $i; echo next $?; done; echo end")
			loop.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
			// Its own process group, which Ctrl-C signals as a terminal's
			// foreground job.
			loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			end := signalled(t, loop, func(cmd *exec.Cmd, _ int) { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) })
			if strings.Contains(end.stdout, "next") || strings.Contains(end.stdout, "end") || !end.ws.Signaled() || end.ws.Signal() != syscall.SIGINT {
				t.Errorf("the loop went on (stdout %q, bash %s); want it stopped, killed by SIGINT", end.stdout, how(end.ws))
			}
		})
	}
}

// Ctrl-Z stops the script with evalhost, as it stops python3: the
// interpreter has a session of its own, out of the terminal's reach, so run
// stops its process group and then itself; SIGCONT (fg) continues both.
func TestRunCtrlZStopsTheScript(t *testing.T) {
	script := writeScript(t, t.TempDir(), "z.py", waitingScript("", ""))
	cmd := command(t, "run", script)
	var pid int
	end := signalled(t, cmd, func(cmd *exec.Cmd, p int) {
		pid = p
		cmd.Process.Signal(syscall.SIGTSTP)
		testkit.WaitState(t, cmd.Process.Pid, 'T')
		testkit.WaitState(t, pid, 'T')
		cmd.Process.Signal(syscall.SIGCONT)
		testkit.WaitState(t, pid, 'S')
		cmd.Process.Signal(syscall.SIGTERM)
	})
	if !end.ws.Signaled() || end.ws.Signal() != syscall.SIGTERM {
		t.Errorf("run ended %s, want killed by SIGTERM; stderr %s", how(end.ws), end.stderr)
	}
}

// A signal that reaches the script once its last statement has run, while
// its atexit handler or the wait for a non-daemon thread is under way, does
// what it does to python3 then: a SIGTERM without a handler kills it (and
// run) silently, and a Ctrl-C the handler catches is the script's to take:
// it exits as it would have.
func TestRunSignalsAtExitAsPython(t *testing.T) {
	dir := t.TempDir()
	// atexitWait: the pid, then an atexit handler blocks in read(2) (around
	// wraps it, WAIT where the read goes).
	atexitWait := func(around string) string {
		wait := "os.read(r, 1)\n"
		if around != "" {
			wait = strings.ReplaceAll(around, "WAIT\n", indent(wait))
		}
		return "import atexit, os, signal, sys, time\nr, w = os.pipe()\ndef f():\n" + indent(wait) +
			"atexit.register(f)\nprint(os.getpid(), flush=True)\n"
	}
	tests := []struct {
		name string
		src  string
		sig  syscall.Signal
	}{
		{"SIGTERM in an atexit handler", atexitWait(""), syscall.SIGTERM},
		{"SIGHUP in an atexit handler", atexitWait(""), syscall.SIGHUP},
		{"SIGINT caught in an atexit handler", atexitWait("try:\nWAIT\nexcept KeyboardInterrupt:\n    print('caught')\n"), syscall.SIGINT},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			signalledAsPython(t, writeScript(t, dir, fmt.Sprintf("x%d.py", i), tc.src), tc.sig)
		})
	}
}

// A SIGTSTP to a run whose process group is orphaned (started by setsid,
// a daemon, a supervisor: no shell to continue it) is discarded, as the
// kernel discards it for python3 there; stopping itself would leave run
// and its script stopped for ever. The SIGTERM after it ends both.
func TestRunOrphanedIgnoresCtrlZ(t *testing.T) {
	script := writeScript(t, t.TempDir(), "o.py", waitingScript("", ""))
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
	}{
		{"evalhost run", command(t, "run", script)},
		{"python3", pythonCmd(t, script)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := tc.cmd
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			w := startWaiting(t, cmd)
			r, stderr := w.r, w.stderr
			cmd.Process.Signal(syscall.SIGTSTP)
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() {
				io.Copy(io.Discard, r)
				done <- cmd.Wait()
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill() // a stopped process takes SIGKILL
				<-done
				t.Fatal("it did not end: stopped by the SIGTSTP")
			}
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Errorf("ended %s, want killed by SIGTERM; stderr %s", how(ws), stderr)
			}
		})
	}
}

// A signal that comes while a shell cell of a percent script runs, its
// Python interpreter idle, ends the run as before the interpreter is up:
// run dies of it, silently, as python3 would have (passed to the idle
// interpreter, a SIGTERM would have killed only that, the shell cell run
// on to its end, and the next Python cell failed for the lost state; a
// SIGUSR1 would have been dropped).
func TestRunSignalDuringAShellCell(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := writeScript(t, t.TempDir(), "mixed.py", "# %%\nx = 1\n# %% [sh]\necho running; sleep 20; echo slept\n# %%\nprint('after', x)\n")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGUSR1} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := command(t, "run", script)
			stdout, stderr := testkit.StartPiped(t, cmd)
			t.Cleanup(func() { cmd.Process.Kill() })
			r := bufio.NewReader(stdout)
			if line, err := r.ReadString('\n'); strings.TrimSpace(line) != "running" {
				t.Fatalf("first line %q (%v); stderr %s", line, err, stderr)
			}
			cmd.Process.Signal(sig)
			rest, _ := io.ReadAll(r)
			cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != sig || strings.Contains(string(rest), "slept") || stderr.String() != "" {
				t.Errorf("run ended %s, stdout after %q, stderr %q; want killed by %v, the shell cell stopped, nothing said", how(ws), rest, stderr, sig)
			}
		})
	}
}

// After a Ctrl-C the script took, a percent script's later cells run on
// (as python3's statements do) without the run's cancellation; a reader
// that then leaves (| head) still ends them, as python3 dies at its next
// write, instead of leaving run printing into the closed pipe for ever.
func TestRunOutputClosedAfterATakenCtrlC(t *testing.T) {
	script := writeScript(t, t.TempDir(), "loop.py", "# %%\n"+
		waitingScript("", "try:\nWAIT\nexcept KeyboardInterrupt:\n    print('caught', flush=True)\n")+
		"# %%\nimport time\nwhile True:\n    print('more', flush=True)\n    time.sleep(0.01)\n")
	cmd := command(t, "run", script)
	w := startWaiting(t, cmd)
	r, stdout, stderr := w.r, w.stdout, w.stderr
	cmd.Process.Signal(syscall.SIGINT)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the output ended (%v) before the later cell printed; stderr %s", err, stderr)
		}
		if l == "more\n" {
			break
		}
	}
	stdout.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("run printed on after its reader left; stderr %s", stderr)
	}
}
