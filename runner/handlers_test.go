package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// TestHandlerRaisesBetweenCells: a script's signal handler that raises
// while no cell runs (the runner waiting for the next request) runs at
// once, as python3's would, and what it raises is the next cell's, at its
// first statement, as python3 raises it at its next statement; or, when
// the exit comes next, the exit reports it as python3 reports an uncaught
// exception at its end, and exits with its status. Before, it went up
// through the runner's request loop, and the runner died with status 1 and
// no traceback anyone saw.
func TestHandlerRaisesBetweenCells(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raise string // the handler's last line
		then  func(t *testing.T, p *proc)
	}{
		{"the next cell raises it at its first statement", "raise RuntimeError('quit')", func(t *testing.T, p *proc) {
			c := p.run("# a comment\n\nx = 2\nx")
			e := wantError(t, c, "RuntimeError")
			tb := strings.Join(e.Traceback, "\n")
			if !strings.Contains(tb, "File \"<cell 2>\", line 3, in <module>\n    x = 2\n") || !strings.Contains(tb, ", in h\n") {
				t.Errorf("traceback:\n%s\nwant the cell's first statement, then the handler", tb)
			}
			wantResult("False")(t, p.run("'x' in dir()"))
			wantResult("True")(t, p.run("signal.getsignal(signal.SIGUSR1) is h and signal.signal(signal.SIGUSR1, signal.SIG_DFL) is h"))
		}},
		{"a cell far down its file raises it at its own line", "raise RuntimeError('quit')", func(t *testing.T, p *proc) {
			path := filepath.Join(t.TempDir(), "far.py")
			if err := os.WriteFile(path, []byte(strings.Repeat("\n", 3000)+"x = 2\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c := p.runReq(map[string]any{"code": "x = 2\n", "filename": path, "line": 3001})
			e := wantError(t, c, "RuntimeError")
			if tb := strings.Join(e.Traceback, "\n"); !strings.Contains(tb, "File \""+path+"\", line 3001, in <module>\n    x = 2\n") {
				t.Errorf("traceback:\n%s\nwant the far cell's line 3001 first", tb)
			}
		}},
		{"sys.exit in it ends the next cell with its status", "sys.exit(3)", func(t *testing.T, p *proc) {
			d := p.run("x = 2").done()
			if !d.Exit || d.ExitStatus != 3 {
				t.Errorf("done %+v, want the exit with status 3", d)
			}
		}},
		{"the exit reports it", "raise RuntimeError('quit')", func(t *testing.T, p *proc) {
			p.send(map[string]any{"type": "exit"})
			if code := p.wait(); code != 1 {
				t.Errorf("exit code %d, want 1, as python3's after an uncaught exception", code)
			}
			p.errs.waitFor(t, "RuntimeError: quit\n")
			if got := p.errs.snapshot(); !strings.HasPrefix(got, "Traceback (most recent call last):\n") || !strings.Contains(got, ", in h\n") ||
				strings.Contains(got, "core.py") {
				t.Errorf("stderr %q; want the handler's traceback, without the runner's frames", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{})
			mark := filepath.Join(t.TempDir(), "ran")
			c := p.run("import signal, sys\ndef h(n, f):\n    open(" + strconv.Quote(mark) + ", 'w').close()\n    " + tc.raise +
				"\nsignal.signal(signal.SIGUSR1, h)")
			if d := c.done(); d.Status != frames.StatusOK {
				t.Fatalf("done %+v; stderr %s", d, c.stderr)
			}
			signalUntilFile(t, p.cmd.Process.Pid, syscall.SIGUSR1, mark) // the handler ran, between cells
			tc.then(t, p)
		})
	}
}

// signalUntilFile sends sig to pid until path exists, the handler's
// mark. Sent again because one signal can land in CPython's window before
// a blocking read (after its last check for signals, before the read
// starts): its handler then runs when the read returns, here the next
// request, which the test sends only after the mark. python3 blocked in
// its own read (input(), sys.stdin) has the same window. A signal sent
// while the runner waits in its read interrupts it, and the handler runs.
func signalUntilFile(t *testing.T, pid int, sig syscall.Signal, path string) {
	t.Helper()
	next := time.Now()
	for deadline := time.Now().Add(watchdog); ; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(next) {
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			next = time.Now().Add(500 * time.Millisecond)
		}
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchdog: no %s within %v", path, watchdog)
		}
	}
}

// TestHandlerRaisesInACellAsPython: while a cell runs, the script's own
// function is its handler, so what it raises there has python3's frames,
// none of the runner's between the cell's and the handler's, in a cell
// after the one that set it too (the handler was the runner's stand-in in
// between).
func TestHandlerRaisesInACellAsPython(t *testing.T) {
	const set = "import os, signal, traceback\ndef h(n, f):\n    raise TimeoutError('t')\nsignal.signal(signal.SIGUSR1, h)\n"
	const raise = "try:\n    os.kill(os.getpid(), signal.SIGUSR1)\n    for _ in range(10**6):\n        pass\n" +
		"except TimeoutError as e:\n    print([f.name for f in traceback.extract_tb(e.__traceback__)])\n"
	want, err := exec.Command(python(t), "-c", set+raise).CombinedOutput()
	if err != nil || string(want) != "['<module>', 'h']\n" {
		t.Fatalf("python3: %q, %v", want, err)
	}
	p := start(t, startOpts{})
	for i, code := range []string{set + raise, raise} {
		if c := p.run(code); c.stdout != string(want) {
			t.Errorf("cell %d: stdout %q, python3's %q; stderr %q", i+1, c.stdout, want, c.stderr)
		}
	}
}
