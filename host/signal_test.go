package host

import (
	"context"
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// An interrupt cancelled with backend.ErrInterruptWait lets the cell take
// the KeyboardInterrupt and finish its handling past the grace window (as
// python3's Ctrl-C does); any other cancel kills it at the grace window.
func TestInterruptWaitOutlastsTheGrace(t *testing.T) {
	checkClean(t, 2*time.Minute)
	const code = "import time\ntry:\n    print('ready', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n" +
		"    time.sleep(0.6)\n    print('saved', flush=True)"
	for _, tc := range []struct {
		name     string
		cause    error
		deadline time.Duration // of the cell's context; 0: none
		killed   bool
	}{
		{"waited for", backend.ErrInterruptWait, 0, false},
		{"waited for, a deadline as far as time goes", backend.ErrInterruptWait, math.MaxInt64, false}, // sessions.NoTimeout's
		{"cut at the grace window", nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = 200 * time.Millisecond })
			parent := context.Background()
			if tc.deadline > 0 {
				var stop context.CancelFunc
				parent, stop = context.WithTimeout(parent, tc.deadline)
				defer stop()
			}
			ctx, cancel := context.WithCancelCause(parent)
			defer cancel(nil)
			var out strings.Builder
			done, err := p.Execute(ctx, frames.Request{Code: code}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout {
					out.WriteString(f.Data)
					if f.Data == "ready\n" {
						cancel(tc.cause)
					}
				}
			})
			if killed := errors.Is(err, backend.ErrKilled); killed != tc.killed {
				t.Fatalf("err = %v, stdout %q; want killed %v", err, out.String(), tc.killed)
			}
			if saved := strings.Contains(out.String(), "saved"); saved == tc.killed {
				t.Errorf("stdout %q; the cell's handling ran to its end: %v, want %v", out.String(), saved, !tc.killed)
			}
			if !tc.killed && (!done.Interrupted || done.Cancelled || done.Status != frames.StatusOK) {
				t.Errorf("done %+v; want it ok and Interrupted: the cell took the interrupt", done)
			}
		})
	}
}

// Signal reaches the interpreter's handler at once, even while its main
// thread blocks (it goes to that thread), and only the interpreter: a
// process it started keeps running.
func TestSignalReachesTheHandler(t *testing.T) {
	checkClean(t, 2*time.Minute)
	p := startPy(t, nil)
	const code = "import os, signal, subprocess, time\n" +
		"child = subprocess.Popen(['sleep', '30'])\n" +
		"class Stop(Exception): pass\n" +
		"def h(n, f):\n    print('usr1', n)\n    raise Stop\n" +
		"signal.signal(signal.SIGUSR1, h)\n" +
		"try:\n    print('ready', flush=True)\n    time.sleep(30)\nexcept Stop:\n    print('child', child.poll())\n" +
		"child.kill(); child.wait()"
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Signal while idle: %v, want ErrNotRunning (not sent)", err)
	}
	sent := false
	r := &run{}
	_, err := p.Execute(context.Background(), frames.Request{Code: code}, func(f frames.Frame) {
		r.frames = append(r.frames, f)
		if f.Type == frames.TypeStdout && f.Data == "ready\n" && !sent {
			sent = true
			if err := p.Signal(syscall.SIGUSR1); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.stdout(); got != "ready\nusr1 10\nchild None\n" {
		t.Errorf("stdout %q; want the handler's line, then the child still running", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Signal after Close: %v, want ErrClosed", err)
	}
}

// A cell's time limit still bounds an interrupt that waits: python3 has no
// timeout, but the caller gave one, and a cell (or its exit) that catches
// the KeyboardInterrupt and goes on is stopped at the limit and the grace
// window after it, as a timeout would stop it, not waited for until it
// ends by itself. The limit is ctx's deadline, or the caller's own
// (backend.WithTimeLimit: a context without a deadline), which passes here
// right after the interrupt.
func TestInterruptWaitEndsAtTheDeadline(t *testing.T) {
	checkClean(t, 2*time.Minute)
	const (
		inCell = "import time\ntry:\n    print('ready', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n" +
			"    time.sleep(30)\n    print('saved', flush=True)"
		inExit = "import atexit, time\n@atexit.register\ndef f():\n    try:\n        print('ready', flush=True)\n        time.sleep(60)\n" +
			"    except KeyboardInterrupt:\n        time.sleep(30)\n        print('saved', flush=True)"
	)
	for _, tc := range []struct {
		name      string
		code      string
		last      bool // ExitAfterNextCell: the wait is the exit's
		timeLimit bool // backend.WithTimeLimit, not a deadline
	}{
		{"in the cell", inCell, false, false},
		{"in its exit", inExit, true, false},
		{"in the cell, the caller's time limit", inCell, false, true},
		{"in its exit, the caller's time limit", inExit, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = 200 * time.Millisecond })
			if tc.last {
				p.ExitAfterNextCell()
			}
			parent, interrupt := context.WithCancelCause(context.Background())
			defer interrupt(nil)
			ctx, cancel := context.WithTimeout(parent, 2*time.Second)
			defer cancel()
			passed := make(chan struct{})
			if tc.timeLimit {
				ctx = backend.WithTimeLimit(parent, passed)
			}
			r := &run{}
			r.done, r.err = p.Execute(ctx, frames.Request{Code: tc.code}, func(f frames.Frame) {
				r.frames = append(r.frames, f)
				if f.Type == frames.TypeStdout && f.Data == "ready\n" {
					interrupt(backend.ErrInterruptWait)
					close(passed)
				}
			})
			if strings.Contains(r.stdout(), "saved") {
				t.Fatalf("stdout %q: the handling ran to its end past the deadline", r.stdout())
			}
			if stopped := errors.Is(r.err, backend.ErrKilled) || r.err == nil && r.done.Cancelled; !stopped {
				t.Errorf("done %+v, err %v; want the cell stopped (killed, or its exit cut: cancelled)", r.done, r.err)
			}
		})
	}
}
