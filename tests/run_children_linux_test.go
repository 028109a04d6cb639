package tests

import (
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A Ctrl-C reaches the script's children under run where it reaches
// python3's: typed at the terminal it goes to the whole foreground job,
// python3 and its children, so run passes it on to the script's process
// group; kill -INT of the pid reaches python3 alone, so run interrupts the
// script alone (it went to the group, and a child of the script's took a
// SIGINT no one sent it: a KeyboardInterrupt, or its death), and so does
// one where the terminal cannot have sent it (ISIG off). The script
// catches its KeyboardInterrupt and goes on, as python3 does.
func TestRunInterruptReachesTheChildrenAsPython(t *testing.T) {
	waitForRelease := "try:\n    os.read(r, 1)\nexcept KeyboardInterrupt:\n    pass\n"
	reachesTheChildrenAsPython(t, syscall.SIGINT, "\x03", waitForRelease)
}

// reachesTheChildrenAsPython runs a script under run and under python3,
// sends sig to each as the terminal's key (typed at it) and by kill of
// the pid (at no terminal, and at one without ISIG), and compares what
// the script's child saw, how each ended and what the script printed. The
// child blocks sig and, once the script is released (wait, Python lines
// with r and w: a pipe's ends, and os imported), says whether one is
// pending.
func reachesTheChildrenAsPython(t *testing.T, sig syscall.Signal, key, wait string) {
	name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
	child := "import signal, sys\\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal." + unix.SignalName(sig) + "})\\n" +
		"print('ready', flush=True)\\nsys.stdin.read()\\n" +
		"print('pending' if signal." + unix.SignalName(sig) + " in signal.sigpending() else 'none', flush=True)"
	script := writeScript(t, t.TempDir(), "kids.py", "import os, signal, subprocess, sys\nr, w = os.pipe()\n"+
		"child = subprocess.Popen([sys.executable, '-c', \""+child+"\"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"+
		"child.stdout.readline()\nprint(os.getpid(), flush=True)\n"+wait+"child.stdin.close()\n"+
		"print('child:', child.stdout.read().decode().strip())\nchild.wait()\n")
	pidLine := regexp.MustCompile(`(?m)^([0-9]+)\r?$`)
	// atTerminal starts cmd in term, sends sig once the script waits
	// (send: kill of the pid, else the key typed), and returns what the
	// terminal showed after the pid, and how cmd ended.
	atTerminal := func(t *testing.T, term *testkit.Terminal, cmd *exec.Cmd, kill bool) (string, string) {
		inTerminal(t, term, cmd)
		term.Await("\n")
		m := pidLine.FindStringSubmatch(term.Shown())
		if m == nil {
			t.Fatalf("no pid line: %q", term.Shown())
		}
		pid, _ := strconv.Atoi(m[1])
		testkit.WaitSyscall(t, pid, syscall.SYS_READ)
		if kill {
			cmd.Process.Signal(sig)
		} else {
			term.Type(key)
		}
		status := waitStatus(t, cmd)
		term.Await("child:")
		return strings.ReplaceAll(pidLine.ReplaceAllString(term.Shown(), ""), "\r", ""), status
	}
	tests := []struct {
		name string
		want string // python3's child
		// send starts cmd, sends it sig once the script waits, and
		// returns what it printed after its pid, and how it ended.
		send func(t *testing.T, cmd *exec.Cmd) (string, string)
	}{
		{"kill -" + name + " of the pid", "none", func(t *testing.T, cmd *exec.Cmd) (string, string) {
			w := startWaiting(t, asJob(cmd))
			cmd.Process.Signal(sig)
			rest, _ := io.ReadAll(w.r)
			return string(rest), waitStatus(t, cmd)
		}},
		{"the key at the terminal", "pending", func(t *testing.T, cmd *exec.Cmd) (string, string) {
			return atTerminal(t, testkit.NewTerminal(t), cmd, false)
		}},
		{"kill -" + name + " of the pid, at a terminal without ISIG", "none", func(t *testing.T, cmd *exec.Cmd) (string, string) {
			term := testkit.NewTerminal(t)
			tio := termiosOf(t, term.Tty)
			tio.Lflag &^= unix.ISIG
			if err := unix.IoctlSetTermios(int(term.Tty.Fd()), unix.TCSETS, &tio); err != nil {
				t.Fatal(err)
			}
			return atTerminal(t, term, cmd, true)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, wantStatus := tc.send(t, pythonCmd(t, script))
			// After the terminal's echo of the key (^C, ^\), if any.
			if want = strings.TrimLeft(want, "\n"); !strings.HasSuffix(want, "child: "+tc.want+"\n") {
				t.Fatalf("python3 printed %q (%s); want its child's %q", want, wantStatus, tc.want)
			}
			got, status := tc.send(t, command(t, "run", script))
			if got = strings.TrimLeft(got, "\n"); got != want || status != wantStatus {
				t.Errorf("run printed %q (%s), python3 %q (%s)", got, status, want, wantStatus)
			}
		})
	}
}
