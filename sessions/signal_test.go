package sessions

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// Signal reaches the Python interpreter of a session's running cell,
// persistent or per-call: its handler runs; without one the interpreter
// dies of it, and a batch's cell says which signal (CellResult.Signal). It
// says false when no interpreter took it.
func TestRegistrySignal(t *testing.T) {
	r := newTestRegistry(t, Config{})
	if r.Signal("none", syscall.SIGUSR1) {
		t.Fatal("Signal to a session that does not exist said it was sent")
	}
	const wait = "import os, signal\nr, w = os.pipe()\nprint('ready', flush=True)\nos.read(r, 1)\nprint('after')"
	for _, tc := range []struct {
		name   string
		mode   string
		batch  bool
		code   string
		status Status
		signal int
		stdout string
	}{
		{"a handler, per-call", ModePerCall, true, "signal.signal(signal.SIGTERM, lambda n, f: os.write(w, b'x'))\n" + wait,
			StatusOK, 0, "ready\nafter\n"},
		{"no handler, a batch", ModePerCall, true, wait, StatusKilled, int(syscall.SIGTERM), "ready\n"},
		{"no handler, a session's", ModeSession, false, wait, StatusKilled, 0, "ready\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "sig-" + tc.mode
			sent := make(chan bool, 1)
			req := Request{Session: id, Mode: tc.mode, Batch: tc.batch, Cwd: t.TempDir(), Cells: []Cell{py("import os, signal\n" + tc.code)}}
			res, err := r.Eval(context.Background(), req, func(_ int, f frames.Frame) {
				if f.Type == frames.TypeStdout && strings.Contains(f.Data, "ready") {
					go func() { sent <- r.Signal(id, syscall.SIGTERM) }()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case ok := <-sent:
				if !ok {
					t.Fatal("Signal said no interpreter took it")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Signal did not return")
			}
			c := res.Cells[0]
			if c.Status != tc.status || c.Signal != tc.signal || !strings.HasPrefix(c.Output.Text, tc.stdout) {
				t.Errorf("status %s, signal %d, output %q; want %s, %d, %q", c.Status, c.Signal, c.Output.Text, tc.status, tc.signal, tc.stdout)
			}
		})
	}
}

// SignalCell reaches the interpreter running the cell alone, as kill(1) of
// a python3 process's pid: a child of the cell's does not get it, where
// SignalForeground's reaches the whole process group. The child blocks the
// signal and, once released, says whether one is pending.
func TestRegistrySignalCellLeavesTheChildren(t *testing.T) {
	r := newTestRegistry(t, Config{})
	if r.SignalCell("none", syscall.SIGUSR1) {
		t.Fatal("SignalCell to a session that does not exist said it was sent")
	}
	const child = "import signal, sys\\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\\nprint('ready', flush=True)\\n" +
		"sys.stdin.read()\\nprint(signal.SIGUSR1 in signal.sigpending(), flush=True)"
	code := "import os, signal, subprocess, sys\nr, w = os.pipe()\nsignal.signal(signal.SIGUSR1, lambda n, f: os.write(w, b'x'))\n" +
		"child = subprocess.Popen([sys.executable, '-c', \"" + child + "\"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n" +
		"child.stdout.readline()\nprint('ready', flush=True)\nos.read(r, 1)\nchild.stdin.close()\n" +
		"print('child got it:', child.stdout.read().decode().strip())\nchild.wait()"
	for _, tc := range []struct {
		name string
		send func(id string) bool
		want string
	}{
		{"SignalCell", func(id string) bool { return r.SignalCell(id, syscall.SIGUSR1) }, "False"},
		{"SignalForeground", func(id string) bool { return r.SignalForeground(id, syscall.SIGUSR1) }, "True"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "cell-" + tc.name
			sent := make(chan bool, 1)
			req := Request{Session: id, Mode: ModePerCall, Batch: true, Cwd: t.TempDir(), Cells: []Cell{py(code)}}
			res, err := r.Eval(context.Background(), req, func(_ int, f frames.Frame) {
				if f.Type == frames.TypeStdout && strings.Contains(f.Data, "ready") {
					go func() { sent <- tc.send(id) }()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case ok := <-sent:
				if !ok {
					t.Fatal("no interpreter took it")
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("nothing was sent: the cell never waited (%+v)", res.Cells[0])
			}
			if c := res.Cells[0]; c.Status != StatusOK || !strings.Contains(c.Output.Text, "child got it: "+tc.want+"\n") {
				t.Errorf("status %s, output %q; want the child's %s", c.Status, c.Output.Text, tc.want)
			}
		})
	}
}

// A cell that takes an interrupt cancelled with backend.ErrInterruptWait
// (python3's Ctrl-C) and then finishes or exits is what it did, not
// cancelled: its own sys.exit(N) is the script's exit.
func TestInterruptWaitKeepsTheCellsOutcome(t *testing.T) {
	r := newTestRegistry(t, Config{})
	const catch = "import sys, time\ntry:\n    print('ready', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    print('caught')\n"
	for _, tc := range []struct {
		name   string
		code   string
		cause  error
		status Status
		exit   int
	}{
		{"finished", catch, backend.ErrInterruptWait, StatusOK, 0},
		{"sys.exit(3)", catch + "    sys.exit(3)", backend.ErrInterruptWait, StatusError, 3},
		{"any other cancel", catch + "    sys.exit(3)", nil, StatusCancelled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			req := Request{Session: "wait", Mode: ModePerCall, Batch: true, Cwd: t.TempDir(), Cells: []Cell{py(tc.code)}}
			res, _ := r.Eval(ctx, req, func(_ int, f frames.Frame) {
				if f.Type == frames.TypeStdout && strings.Contains(f.Data, "ready") {
					cancel(tc.cause)
				}
			})
			c := res.Cells[0]
			status, _ := c.ScriptExit()
			if c.Status != tc.status || status != tc.exit {
				t.Errorf("status %s, exit %d (message %q); want %s, %d", c.Status, status, c.Message, tc.status, tc.exit)
			}
		})
	}
}
