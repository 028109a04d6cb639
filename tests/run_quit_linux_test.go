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
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Ctrl-\ (SIGQUIT) sent to run, as a terminal sends it to its foreground
// job (run's process group) or by kill -QUIT of run's pid, reaches the
// script as it reaches python3: faulthandler dumps the tracebacks and the
// script goes on, a handler of the script's runs (again at a second
// Ctrl-\), SIG_IGN ignores it, and by default the script dies of it, and
// run with it. Each row is compared with python3's stdout, stderr (for
// faulthandler's dump, its lines of the script: run's shows the runner's
// frames and threads too) and wait status.
func TestRunQuitAsPython(t *testing.T) {
	dir := t.TempDir()
	const release = "signal.signal(signal.SIGUSR1, lambda n, f: os.write(w, b'x'))\n"
	tests := []struct {
		name   string
		before string
		quits  int  // each after the script printed that it took the one before
		free   bool // a SIGUSR1 then releases the script
		dump   bool // faulthandler's: stderr compared by the script's lines
	}{
		{"faulthandler.register", "import faulthandler\nfaulthandler.register(signal.SIGQUIT)\n" + release, 1, true, true},
		{"a handler, twice", "n = 0\ndef h(s, f):\n    global n\n    n += 1\n    os.write(1, b'quit %d\\n' % n)\n" +
			"    if n == 2:\n        os.write(w, b'x')\nsignal.signal(signal.SIGQUIT, h)\n", 2, false, false},
		{"SIG_IGN", "signal.signal(signal.SIGQUIT, signal.SIG_IGN)\n" + release, 1, true, false},
		{"the default", "", 1, false, false},
	}
	senders := []struct {
		name string
		send func(cmd *exec.Cmd, sig syscall.Signal)
	}{
		{"to the process group", func(cmd *exec.Cmd, sig syscall.Signal) { syscall.Kill(-cmd.Process.Pid, sig) }},
		{"to the pid", func(cmd *exec.Cmd, sig syscall.Signal) { cmd.Process.Signal(sig) }},
	}
	for i, tc := range tests {
		script := writeScript(t, dir, fmt.Sprintf("q%d.py", i), waitingScript(tc.before, "")+"print('after')\n")
		for _, s := range senders {
			t.Run(tc.name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				quit := func(t *testing.T, cmd *exec.Cmd) signalEnd {
					return quitted(t, asJob(cmd), tc.quits, tc.free, tc.dump, s.send)
				}
				got := quit(t, command(t, "run", script))
				want := quit(t, pythonCmd(t, script))
				gotErr, wantErr := got.stderr, want.stderr
				if tc.dump {
					gotErr, wantErr = linesOf(gotErr, script), linesOf(wantErr, script)
					if wantErr == "" {
						t.Fatalf("python3 dumped no traceback: %q", want.stderr)
					}
				}
				if got.stdout != want.stdout || gotErr != wantErr {
					t.Errorf("stdout %q, stderr %q; python3 printed %q, %q", got.stdout, got.stderr, want.stdout, want.stderr)
				}
				if how(got.ws) != how(want.ws) {
					t.Errorf("run ended %s, python3 %s", how(got.ws), how(want.ws))
				}
			})
		}
	}
}

// quitted starts cmd (a waitingScript's), sends it quits SIGQUITs, each
// but the last followed by a wait for the line the script's handler
// prints (dump: for faulthandler's dump on stderr), then a SIGUSR1 when
// free, and returns how it ended. The SIGUSR1 waits for the dump's
// handler to return: one that comes while it runs (or with the SIGQUIT)
// is taken, but read(2) is restarted, as faulthandler's handler asks
// (SA_RESTART), and the script's handler runs only at a later signal;
// python3 hangs so too. The script's handler writes with os.write: a
// second SIGQUIT in the middle of a print's would make it reentrant.
func quitted(t *testing.T, cmd *exec.Cmd, quits int, free, dump bool, send func(*exec.Cmd, syscall.Signal)) signalEnd {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &watchedBuffer{grew: make(chan struct{}, 1)}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	pid := waitForPid(t, cmd, r, stderr)
	var out strings.Builder
	for i := range quits {
		send(cmd, syscall.SIGQUIT)
		if i < quits-1 {
			line, err := r.ReadString('\n')
			out.WriteString(line)
			if err != nil {
				t.Fatalf("no line after Ctrl-\\ %d: %v; stderr %s", i+1, err, stderr)
			}
		}
	}
	if dump {
		stderr.waitFor(t, "most recent call first")
		testkit.WaitSyscall(t, pid, syscall.SYS_READ) // the handler returned
	}
	if free {
		send(cmd, syscall.SIGUSR1)
	}
	rest, _ := io.ReadAll(r)
	out.Write(rest)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not end")
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return signalEnd{stdout: out.String(), stderr: stderr.String(), ws: cmd.ProcessState.Sys().(syscall.WaitStatus)}
}

// watchedBuffer is a command's stderr that can be awaited as it grows.
type watchedBuffer struct {
	mu   sync.Mutex
	b    strings.Builder
	grew chan struct{}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.grew <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until the buffer holds text.
func (w *watchedBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for !strings.Contains(w.String(), text) {
		select {
		case <-w.grew:
		case <-timeout:
			t.Fatalf("stderr never showed %q: %q", text, w.String())
		}
	}
}

// linesOf is text's lines that name file (a traceback's frames in it).
func linesOf(text, file string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if strings.Contains(sc.Text(), fmt.Sprintf("%q", file)) {
			b.WriteString(strings.TrimSpace(sc.Text()) + "\n")
		}
	}
	return b.String()
}

// Ctrl-\ during a shell cell goes to the foreground group of bash's
// terminal, as at a terminal: the cell's program dies of it (bash,
// interactive, ignores it), the cell goes on to its end, and so does the
// run (before, it killed the run and its interpreters at once).
func TestRunQuitDuringAShellCell(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := writeScript(t, t.TempDir(), "mixed.py", "# %%\nx = 1\n# %% [sh]\necho $$; sleep 20; echo slept $?\n# %%\nprint('after', x)\n")
	cmd := command(t, "run", script)
	stdout, stderr := testkit.StartPiped(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	line, _ := r.ReadString('\n')
	bash, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("first line %q, want bash's pid; stderr %s", line, stderr)
	}
	waitForChild(t, bash, "sleep")
	cmd.Process.Signal(syscall.SIGQUIT)
	rest, _ := io.ReadAll(r)
	cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if string(rest) != "slept 131\nafter 1\n" || how(ws) != "exit 0" {
		t.Errorf("run ended %s, stdout after %q, stderr %q; want exit 0 after \"slept 131\", \"after 1\"", how(ws), rest, stderr)
	}
}

// waitForChild waits until a child of pid runs comm.
func waitForChild(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, k := range strings.Fields(string(kids)) {
			if c, _ := os.ReadFile("/proc/" + k + "/comm"); strings.TrimSpace(string(c)) == comm {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never started %s", pid, comm)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A Ctrl-\ passed on as a cell ends can reach the interpreter after the
// cell, before run sees the cell's end: it dies between cells, as python3
// would have died of it there. run dies of it too, silently, not exit 1
// with "ended before this cell" (1 in 40 runs of many tiny cells did).
// Here the shell cell stands in for the gap: it sends the idle
// interpreter SIGQUIT and waits until it is gone, and the Python cell
// after it finds the interpreter dead.
func TestRunQuitBetweenCells(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	pidFile := dir + "/pid"
	script := writeScript(t, dir, "between.py", fmt.Sprintf("# %%%%\nimport os\n_ = open(%q, 'w').write(str(os.getpid()))\n"+
		"# %%%% [sh]\npid=$(cat %s); kill -QUIT $pid; while kill -0 $pid 2>/dev/null; do sleep 0.01; done\n"+
		"# %%%%\nprint('after')\n", pidFile, pidFile))
	cmd := command(t, "run", script)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if how(ws) != how(syscall.WaitStatus(syscall.SIGQUIT)) || stdout.String() != "" || stderr.String() != "" {
		t.Errorf("run ended %s, stdout %q, stderr %q; want it dead of SIGQUIT, silent", how(ws), stdout.String(), stderr.String())
	}
}

// TestRunQuitBeforeTheCells: a Ctrl-\ before any cell runs (here `run -`
// still reading its cells from stdin, as `python3 -` reads its script)
// ends run of SIGQUIT at once, as it ends python3 (its default action),
// not with Go's dump of every goroutine and exit 2.
func TestRunQuitBeforeTheCells(t *testing.T) {
	cmd := command(t, "run", "-")
	stdin, err := cmd.StdinPipe() // kept open: the cells are never read to their end
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "print('never run')\n")
	// Past the start of its main: it has read what stdin holds, so it is
	// reading the cells. (Not its spare reaper's start: package prestart's
	// init starts that before main, and a SIGQUIT then got Go's dump, as
	// in a CI run under load.)
	w := stdin.(*os.File)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("run did not read its stdin within 20s")
		}
	}
	cmd.Process.Signal(syscall.SIGQUIT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("run ended with %v; stderr %q", err, stderr.String())
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGQUIT || strings.Contains(stderr.String(), "goroutine") {
		t.Fatalf("run: %v, stderr %.300q; want it dead of SIGQUIT, as python3 -", err, stderr.String())
	}
}

// A SIGQUIT handler of the script's that raises, hit while the runner
// waits for the next cell (as a Ctrl-\ passed on can land when the cell
// before ends; here a shell cell sends it), does what it does to python3
// at the statement the signal lands in, here the next cell's first: the
// traceback, that line and then the handler's, and exit 1, or a
// sys.exit's status. It went up through the runner's request loop: run
// exited 1, saying the interpreter had ended, and showed no traceback.
// python3 runs the same script, the shell cell a comment for it, and gets
// the signal as it waits in the read of that first statement.
func TestRunQuitHandlerRaisesBetweenCells(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct{ name, raise string }{
		{"raises", "raise RuntimeError('quit')"},
		{"sys.exit(3)", "sys.exit(3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := func(shell string) string {
				return "# %%\nimport os, signal, sys\nr, w = os.pipe()\ndef h(n, f):\n    open('ran', 'w').close()\n    " + tc.raise + "\n" +
					"signal.signal(signal.SIGQUIT, h)\n_ = open('pid', 'w').write(str(os.getpid()))\n" +
					"# %% [sh]\n" + shell + "\n# %%\nos.read(r, 1)\nprint('after')\n"
			}
			dir, pyDir := t.TempDir(), t.TempDir()
			path := writeScript(t, dir, "q.py", script("kill -QUIT $(cat pid); while [ ! -e ran ]; do sleep 0.01; done"))
			pyPath := writeScript(t, pyDir, "q.py", script("# (the shell cell)"))
			cmd := command(t, "run", path)
			cmd.Dir = dir
			out, errOut, code := runCaptured(t, cmd, false)

			py := pythonCmd(t, pyPath)
			py.Dir = pyDir
			var pyOut, pyErr strings.Builder
			py.Stdout, py.Stderr = &pyOut, &pyErr
			if err := py.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { py.Process.Kill() })
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(pyDir + "/pid"); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("python3 wrote no pid; stderr %s", pyErr.String())
				}
			}
			testkit.WaitSyscall(t, py.Process.Pid, syscall.SYS_READ)
			py.Process.Signal(syscall.SIGQUIT)
			py.Wait()
			pyCode := shellStatus(py.ProcessState.Sys().(syscall.WaitStatus))
			sameOutput(t, out, strings.ReplaceAll(errOut, dir, "DIR"), code, pyOut.String(), strings.ReplaceAll(pyErr.String(), pyDir, "DIR"), pyCode)
		})
	}
}

// A SIGQUIT reaches the script's children under run where it reaches
// python3's: a Ctrl-\ typed at the terminal goes to the whole foreground
// job, python3 and its children, so run passes it on to the script's
// process group; kill -QUIT of the pid reaches python3 alone, so run
// passes it to the script alone (it went to the group, and a child of
// the script's took a SIGQUIT no one sent it: a dump, or its death);
// and so does one where the terminal cannot have sent it (its keys raw,
// ISIG off, as an agent's or an editor's).
func TestRunQuitReachesTheChildrenAsPython(t *testing.T) {
	waitForRelease := "signal.signal(signal.SIGQUIT, lambda n, f: os.write(w, b'x'))\nos.read(r, 1)\n"
	reachesTheChildrenAsPython(t, syscall.SIGQUIT, "\x1c", waitForRelease)
}
