package tests

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A script whose interpreter dies of a signal (the OOM killer's SIGKILL, a
// crash's SIGSEGV or SIGABRT, a SIGQUIT or SIGTERM sent to it), or that run
// passes one on to (SIGUSR1, SIGUSR2 without a handler), or Ctrl-\ sent to
// run itself: run dies of the same signal after its clean-up, as python3
// dies of it, so its parent's wait status (a supervisor, a shell's
// WIFSIGNALED and its "Killed") is python3's, and prints what python3
// prints: nothing. Each row is compared with python3's stdout, stderr and
// wait status.
func TestRunDiesOfTheSignalAsPython(t *testing.T) {
	dir := t.TempDir()
	toInterpreter := func(sig syscall.Signal) func(*exec.Cmd, int) {
		return func(_ *exec.Cmd, pid int) { syscall.Kill(pid, sig) }
	}
	tests := []struct {
		name string
		send func(*exec.Cmd, int)
	}{
		{"SIGKILL to the interpreter (the OOM killer)", toInterpreter(syscall.SIGKILL)},
		{"SIGSEGV to the interpreter", toInterpreter(syscall.SIGSEGV)},
		{"SIGABRT to the interpreter", toInterpreter(syscall.SIGABRT)},
		{"SIGQUIT to the interpreter", toInterpreter(syscall.SIGQUIT)},
		{"SIGTERM to the interpreter", toInterpreter(syscall.SIGTERM)},
		{"SIGUSR1 to the interpreter", toInterpreter(syscall.SIGUSR1)},
		{"SIGUSR1 to run, no handler", sendSignal(syscall.SIGUSR1)},
		{"SIGUSR2 to run, no handler", sendSignal(syscall.SIGUSR2)},
		{"Ctrl-\\ (SIGQUIT) to run", sendSignal(syscall.SIGQUIT)},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := writeScript(t, dir, fmt.Sprintf("d%d.py", i), "# %%\n"+waitingScript("", "")+"# %%\nprint('not run')\n")
			got := signalled(t, command(t, "run", script), tc.send)
			want := signalled(t, pythonCmd(t, script), tc.send)
			if got.stdout != want.stdout || got.stderr != want.stderr {
				t.Errorf("stdout %q, stderr %q; python3 printed %q, %q", got.stdout, got.stderr, want.stdout, want.stderr)
			}
			if how(got.ws) != how(want.ws) {
				t.Errorf("run ended %s, python3 %s", how(got.ws), how(want.ws))
			}
			if got.ws.CoreDump() {
				t.Errorf("run dumped core")
			}
		})
	}
}

// Dying of SIGQUIT (or any signal whose default dumps core), run leaves
// no core of its own, where core dumps are on (ulimit -c unlimited): it
// did not crash, it ends as its script did.
func TestRunDiesOfSIGQUITWithoutACore(t *testing.T) {
	script := writeScript(t, t.TempDir(), "q.py", waitingScript("", ""))
	cmd := command(t, "run", script)
	cmd.Args = append([]string{"sh", "-c", `ulimit -c unlimited && exec "$0" "$@"`}, cmd.Args...)
	cmd.Path = "/bin/sh"
	cmd.Dir = t.TempDir()
	end := signalled(t, cmd, sendSignal(syscall.SIGQUIT))
	if !end.ws.Signaled() || end.ws.Signal() != syscall.SIGQUIT || end.ws.CoreDump() {
		t.Errorf("run ended %s (core dumped: %v), want killed by SIGQUIT without a core; stderr %s", how(end.ws), end.ws.CoreDump(), end.stderr)
	}
}

// ignoring starts cmd with sig ignored, as nohup starts it (SIGHUP), or
// a non-interactive shell its background job (SIGINT, SIGQUIT).
func ignoring(cmd *exec.Cmd, sig string) *exec.Cmd {
	cmd.Args = append([]string{"sh", "-c", `trap "" ` + sig + ` && exec "$0" "$@"`}, cmd.Args...)
	cmd.Path = "/bin/sh"
	return cmd
}

// A signal run was started ignoring (nohup's SIGHUP, a background job's
// SIGINT, a trap "" TSTP) stays ignored, by run and its script, as by
// python3: the script goes on, and ends as it would have (released by a
// SIGUSR1). (A SIGTSTP run caught stopped it for good.) Not SIGQUIT,
// SIGTERM, SIGUSR1 or SIGUSR2: Go's runtime replaces their inherited
// SIG_IGN before any of evalhost runs, and nothing tells it was there.
func TestRunStartedIgnoringASignal(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		trap string
		sig  syscall.Signal
	}{
		{"HUP", syscall.SIGHUP},
		{"INT", syscall.SIGINT},
		{"TSTP", syscall.SIGTSTP},
	} {
		t.Run(tc.trap, func(t *testing.T) {
			t.Parallel()
			script := writeScript(t, dir, fmt.Sprintf("i%d.py", i), releasedScript)
			send := func(cmd *exec.Cmd, pid int) {
				cmd.Process.Signal(tc.sig)
				cmd.Process.Signal(syscall.SIGUSR1)
				// A SIGTSTP taken stops the run for good: said now, not
				// after signalled's minute.
				testkit.FailIfStopped(t, func() { cmd.Process.Kill() }, cmd.Process.Pid, pid)
			}
			got := signalled(t, ignoring(command(t, "run", script), tc.trap), send)
			want := signalled(t, ignoring(pythonCmd(t, script), tc.trap), send)
			if got.stdout != want.stdout || got.stderr != want.stderr || how(got.ws) != how(want.ws) {
				t.Errorf("stdout %q, stderr %q, %s; python3 printed %q, %q, %s", got.stdout, got.stderr, how(got.ws), want.stdout, want.stderr, how(want.ws))
			}
		})
	}
}

// python3 dies of SIGINT after an uncaught KeyboardInterrupt also when it
// was started ignoring SIGINT (a non-interactive shell's background job):
// it sets SIGINT's default before it kills itself. So does run.
func TestRunRaisedKeyboardInterruptIgnoringSIGINT(t *testing.T) {
	const code = "print('a', flush=True)\nraise KeyboardInterrupt"
	got := ignoring(command(t, "run", "-c", code), "INT")
	want := ignoring(pythonCmd(t, "-c", code), "INT")
	out, errOut, _ := runCaptured(t, got, false)
	pyOut, pyErr, _ := runCaptured(t, want, false)
	ws, pyWS := got.ProcessState.Sys().(syscall.WaitStatus), want.ProcessState.Sys().(syscall.WaitStatus)
	if out != pyOut || lastLine(errOut) != lastLine(pyErr) || how(ws) != how(pyWS) {
		t.Errorf("stdout %q, stderr %q, %s; python3: %q, %q, %s", out, errOut, how(ws), pyOut, pyErr, how(pyWS))
	}
}
