package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

func TestStartReady(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	r := p.Ready()
	if r.Type != frames.TypeReady || r.PID != p.Pid() || r.Runner == "" || !strings.HasPrefix(r.Python, "3.") || r.Executable == "" {
		t.Fatalf("ready frame = %+v (pid %d)", r, p.Pid())
	}
	if !p.Alive() || len(liveInGroup(p.Pid())) != 1 {
		t.Fatalf("alive %v, group members %q; want the runner alone", p.Alive(), liveInGroup(p.Pid()))
	}
	if rss, err := p.RSS(); err != nil || rss < 1<<20 {
		t.Fatalf("rss = %d, %v; want at least 1 MiB", rss, err)
	}
}

func TestExecute(t *testing.T) {
	checkClean(t, 2*time.Minute)
	p := startPy(t, nil)
	cases := []struct {
		name, code    string
		status        string
		stdout        string
		stderr        string
		result, ename string
	}{
		{name: "expression result", code: "1+1", status: "ok", result: "2"},
		{name: "prints", code: "print('a')\nprint('b', file=__import__('sys').stderr)", status: "ok", stdout: "a\n", stderr: "b\n"},
		{name: "raw fd writes and subprocess in order with prints",
			code:   "import os, subprocess\nprint('one', flush=True)\nos.write(1, b'raw\\n')\nsubprocess.run(['echo', 'sub'])\nprint('two')",
			status: "ok", stdout: "one\nraw\nsub\ntwo\n"},
		{name: "state persists", code: "x = 41\nx + 1", status: "ok", result: "42"},
		{name: "error", code: "undefined_name", status: "error", ename: "NameError"},
		{name: "utf8 split across writes", code: "import os, time\ne = 'é'.encode()\nos.write(1, e[:1]); time.sleep(0.05); os.write(1, e[1:] + b'\\n')", status: "ok", stdout: "é\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, p, context.Background(), tc.code)
			if r.err != nil {
				t.Fatalf("execute: %v", r.err)
			}
			if r.done.Type != frames.TypeDone || r.done.Status != tc.status {
				t.Fatalf("done = %+v; frames:\n%s", r.done, dumpFrames(r.frames))
			}
			if got := r.stdout(); got != tc.stdout {
				t.Errorf("stdout = %q, want %q", got, tc.stdout)
			}
			if got := r.stderr(); got != tc.stderr {
				t.Errorf("stderr = %q, want %q", got, tc.stderr)
			}
			for _, f := range r.frames {
				if f.ID != r.done.ID && f.Type != frames.TypeWarning {
					t.Errorf("frame %s has id %q, want %q", f.Type, f.ID, r.done.ID)
				}
				if !utf8.ValidString(f.Data) {
					t.Errorf("frame %s data %q is not valid UTF-8", f.Type, f.Data)
				}
			}
			if s, ok := r.first(frames.TypeStarted); !ok || s.ID != r.done.ID {
				t.Errorf("no started frame for %q", r.done.ID)
			}
			if tc.result != "" {
				res, _ := r.first(frames.TypeResult)
				if got, _ := res.Bundle.Text("text/plain"); got != tc.result {
					t.Errorf("result = %q, want %q", got, tc.result)
				}
			}
			if tc.ename != "" {
				e, _ := r.first(frames.TypeError)
				if e.Ename != tc.ename {
					t.Errorf("error = %+v, want ename %s", e, tc.ename)
				}
			}
		})
	}
}

func TestInputFailsFast(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := execute(t, p, ctx, "input('name? ')")
	if r.err != nil || r.done.Status != frames.StatusError || r.done.Cancelled {
		t.Fatalf("done = %+v, err = %v; want a failed cell", r.done, r.err)
	}
	if _, ok := r.first(frames.TypeError); !ok {
		t.Fatalf("no error frame:\n%s", dumpFrames(r.frames))
	}
}

func TestBulkOutputStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB through the pipes")
	}
	checkClean(t, 2*time.Minute)
	p := startPy(t, nil)
	const total = 50 << 20
	var n, chunks int
	var largest int
	done, err := p.Execute(context.Background(), frames.Request{Code: "import sys\nsys.stdout.write('x' * " + strconv.Itoa(total) + ")"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				n += len(f.Data)
				chunks++
				largest = max(largest, len(f.Data))
			}
		})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", done, err)
	}
	if n != total {
		t.Fatalf("got %d stdout bytes, want %d", n, total)
	}
	if largest > readSize {
		t.Fatalf("a stdout frame held %d bytes; frames must stay within one read (%d)", largest, readSize)
	}
}

func TestCancel(t *testing.T) {
	checkClean(t, time.Minute)
	t.Run("interrupt ends a busy loop", func(t *testing.T) {
		p := startPy(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		r := execute(t, p, ctx, "print('spinning', flush=True)\nwhile True: pass")
		if r.err != nil || !r.done.Cancelled {
			t.Fatalf("done = %+v, err = %v; want a cancelled done", r.done, r.err)
		}
		// A hang guard, not a timing (load stretches one): the loop runs
		// for ever unless the interrupt ends it.
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("took %s: the interrupt did not end the loop", el)
		}
		if r.stdout() != "spinning\n" {
			t.Errorf("stdout = %q", r.stdout())
		}
		if after := execute(t, p, context.Background(), "1+1"); after.err != nil || after.done.Status != "ok" {
			t.Fatalf("interpreter unusable after interrupt: %+v %v", after.done, after.err)
		}
	})
	t.Run("ignored SIGINT escalates to kill", func(t *testing.T) {
		p := startPy(t, func(o *Options) { o.Grace = 300 * time.Millisecond })
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		r := execute(t, p, ctx, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('stubborn', flush=True)\nwhile True: pass")
		if !errors.Is(r.err, backend.ErrKilled) {
			t.Fatalf("err = %v, want ErrKilled", r.err)
		}
		if r.stdout() != "stubborn\n" {
			t.Errorf("output before the kill lost: stdout = %q", r.stdout())
		}
		if p.Alive() {
			t.Error("alive after kill")
		}
		if _, err := p.Execute(context.Background(), frames.Request{Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
			t.Errorf("execute after kill: %v, want ErrClosed", err)
		}
	})
}

func TestDeath(t *testing.T) {
	checkClean(t, time.Minute)
	cases := []struct {
		name, code string
		exit       int
		signal     string
	}{
		{name: "os._exit(3)", code: "print('before', flush=True)\nimport os; os._exit(3)", exit: 3},
		{name: "SIGKILL itself", code: "print('before', flush=True)\nimport os; os.kill(os.getpid(), 9)", exit: -1, signal: "killed"},
		{name: "grandchild keeps pipes", code: "import subprocess, os\nprint('before', flush=True)\nsubprocess.Popen(['sleep', '30'])\nos._exit(0)", exit: 0},
		{name: "grandchild in its own session keeps pipes", code: "import subprocess, os\nprint('before', flush=True)\nq = subprocess.Popen(['sleep', '3'], start_new_session=True)\nos._exit(5)", exit: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := execute(t, p, ctx, tc.code)
			var de *backend.DeathError
			if !errors.As(r.err, &de) || !errors.Is(r.err, backend.ErrDied) {
				t.Fatalf("err = %v, want a DeathError", r.err)
			}
			if de.ExitCode != tc.exit || de.Signal != tc.signal {
				t.Errorf("death = %+v, want exit %d signal %q", de, tc.exit, tc.signal)
			}
			if r.stdout() != "before\n" {
				t.Errorf("output before death lost: %q", r.stdout())
			}
			if ctx.Err() != nil {
				t.Errorf("death not noticed before the 20 s deadline")
			}
			select {
			case <-p.Done():
			default:
				t.Error("Done not closed after death")
			}
		})
	}
}

func TestBusyAndClosed(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	var wg sync.WaitGroup
	started := make(chan struct{})
	var first *run
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = &run{}
		var once sync.Once
		first.done, first.err = p.Execute(context.Background(), frames.Request{Code: "import time; time.sleep(0.5)"}, func(f frames.Frame) {
			once.Do(func() { close(started) })
		})
	}()
	<-started
	_, err := p.Execute(context.Background(), frames.Request{Code: "1"}, func(frames.Frame) {})
	wg.Wait()
	if !errors.Is(err, backend.ErrBusy) {
		t.Errorf("second Execute: %v, want ErrBusy", err)
	}
	if first.err != nil || first.done.Status != "ok" {
		t.Errorf("first cell: %+v %v", first.done, first.err)
	}
	for i := range 2 {
		if err := p.Close(); err != nil {
			t.Fatalf("close #%d: %v", i+1, err)
		}
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("kill after close: %v", err)
	}
	if _, err := p.Execute(context.Background(), frames.Request{Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("execute after close: %v, want ErrClosed", err)
	}
	if err := p.Interrupt(); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("interrupt after close: %v, want ErrClosed", err)
	}
}

func TestKillTwice(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	for i := range 2 {
		if err := p.Kill(); err != nil {
			t.Fatalf("kill #%d: %v", i+1, err)
		}
	}
	if p.Alive() {
		t.Fatal("alive after kill")
	}
}

func TestOutputBetweenCellsGoesToNextCell(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	// A thread of the first cell writes once that cell is done and the test
	// says so through a FIFO, and says it wrote through another: no sleep
	// stands in for "after the cell".
	dir := t.TempDir()
	goFIFO, wroteFIFO := filepath.Join(dir, "go"), filepath.Join(dir, "wrote")
	for _, f := range []string{goFIFO, wroteFIFO} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := execute(t, p, context.Background(), fmt.Sprintf(`import threading, os
def late():
    open(%q).read()
    os.write(1, b'late\n')
    open(%q, 'w').close()
threading.Thread(target=late, daemon=True).start()`, goFIFO, wroteFIFO))
	if r.err != nil || r.stdout() != "" {
		t.Fatalf("first cell: %+v %v stdout %q", r.done, r.err, r.stdout())
	}
	if err := os.WriteFile(goFIFO, nil, 0o600); err != nil { // opens once the thread reads
		t.Fatal(err)
	}
	if _, err := os.ReadFile(wroteFIFO); err != nil { // returns once the thread wrote
		t.Fatal(err)
	}
	r = execute(t, p, context.Background(), "print('now')")
	if r.err != nil || r.stdout() != "late\nnow\n" {
		t.Fatalf("second cell stdout = %q, err %v", r.stdout(), r.err)
	}
}

func TestBadFrameLineIsAWarning(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	// the frames pipe is no longer fd 3 in the runner (runner/wire.py, take_fds): its own number
	r := execute(t, p, context.Background(), "import os, sys\nos.write(sys.modules['_evalhost_wire']._frames_fd, b'not json\\n')\n7")
	if r.err != nil || r.done.Status != "ok" {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	w, ok := r.first(frames.TypeWarning)
	if !ok || !strings.Contains(w.Message, "not json") {
		t.Fatalf("want a warning quoting the bad line; frames:\n%s", dumpFrames(r.frames))
	}
	if res, _ := r.first(frames.TypeResult); string(res.Bundle["text/plain"]) != `"7"` {
		t.Errorf("result after the bad line = %s", res.Bundle["text/plain"])
	}
}

func TestStartErrors(t *testing.T) {
	checkClean(t, time.Minute)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.py")
	if err := os.WriteFile(broken, []byte("import sys\nsys.stderr.write('broken runner: cannot import\\n')\nsys.exit(4)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A system that refuses the runner a thread (RLIMIT_NPROC, a pids
	// cgroup at its limit: python3 itself runs on) is played by a
	// sitecustomize that takes _thread's start away.
	noThreads := filepath.Join(dir, "nothreads")
	if err := os.Mkdir(noThreads, 0o755); err != nil {
		t.Fatal(err)
	}
	refuse := "import _thread\n\ndef _refuse(*args, **kwargs):\n    raise RuntimeError(\"can't start new thread\")\n\n_thread.start_new_thread = _refuse\n"
	if err := os.WriteFile(filepath.Join(noThreads, "sitecustomize.py"), []byte(refuse), 0o644); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "python-not-exec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		opts       func() Options
		is         error
		inError    string
		notInError string
		inTail     string
	}{
		{name: "missing interpreter", opts: func() Options {
			return Options{Python: "/nonexistent/bin/python3", Runner: broken}
		}, is: ErrNoInterpreter, inError: "/nonexistent/bin/python3"},
		{name: "interpreter not executable", opts: func() Options {
			return Options{Python: notExec, Runner: broken}
		}, is: ErrNoInterpreter, inError: notExec},
		{name: "a missing interpreter's name is shown quoted", opts: func() Options {
			return Options{Python: "/nonexistent/\x1b]0;title\x07\npython3", Runner: broken}
		}, is: ErrNoInterpreter, inError: `"/nonexistent/\x1b]0;title\a\npython3"`},
		{name: "missing runner", opts: func() Options {
			return Options{Python: python(t), Runner: filepath.Join(dir, "nope.py")}
		}, inError: "nope.py"},
		{name: "dir is a file", opts: func() Options {
			return Options{Python: python(t), Runner: broken, Dir: broken}
		}, inError: "not a directory"},
		// Python said why, in the tail: no guess in the message.
		{name: "runner exits before ready", opts: func() Options {
			return Options{Python: python(t), Runner: broken}
		}, is: backend.ErrDied, inError: "ended with exit code 4 before evalhost's runner started in it",
			notInError: "not a Python interpreter", inTail: "broken runner: cannot import"},
		// Its output thread is part of its start: without it the runner
		// is not ready, and must not say it is (a cell then "died" of it).
		{name: "runner cannot start its thread", opts: func() Options {
			o := pyOptions(t)
			o.Env = append(os.Environ(), "PYTHONPATH="+noThreads)
			return o
		}, is: backend.ErrDied, inError: "before evalhost's runner started in it", inTail: "can't start new thread"},
		// Silent: the user needs to hear that it is likely no Python.
		{name: "not a Python interpreter", opts: func() Options {
			return Options{Python: "/bin/true", Runner: broken}
		}, is: backend.ErrDied, inError: "/bin/true ended with exit code 0 before evalhost's runner started in it: it is likely not a Python interpreter, or is one that cannot run the runner"},
		{name: "never ready", opts: func() Options {
			o := fakeOptions(t, "noready")
			o.StartTimeout = 500 * time.Millisecond
			return o
		}, is: ErrStartTimeout, inTail: "stuck before ready"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(context.Background(), tc.opts())
			if err == nil {
				p.Kill()
				t.Fatal("start succeeded")
			}
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("err = %T %v, want *StartError", err, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			if strings.ContainsAny(err.Error(), "\x1b\a") {
				t.Errorf("err = %q: raw control characters", err)
			}
			if !strings.Contains(err.Error(), tc.inError) {
				t.Errorf("err = %q, want it to mention %q", err, tc.inError)
			}
			if tc.notInError != "" && strings.Contains(err.Error(), tc.notInError) {
				t.Errorf("err = %q, want it not to say %q", err, tc.notInError)
			}
			if !strings.Contains(se.StderrTail, tc.inTail) {
				t.Errorf("stderr tail = %q, want %q", se.StderrTail, tc.inTail)
			}
		})
	}
}

func TestStartCancelledContext(t *testing.T) {
	checkClean(t, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, fakeOptions(t, "noready"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's error", err)
	}
}

var _ = syscall.SIGINT

func TestCloseDuringCell(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, func(o *Options) { o.Grace = 300 * time.Millisecond })
	started := make(chan struct{})
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		var once sync.Once
		_, err = p.Execute(context.Background(), frames.Request{Code: "import time\ntime.sleep(30)"}, func(f frames.Frame) {
			once.Do(func() { close(started) })
		})
	}()
	<-started
	if cerr := p.Close(); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	wg.Wait()
	if !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("execute during close: %v, want ErrClosed", err)
	}
}

func TestInterruptWhileIdleIsIgnored(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	// No pause between the interrupt and the cell: a SIGINT an idle runner
	// took only once it had read the next request used to interrupt that
	// cell.
	for i := range 100 {
		if err := p.Interrupt(); err != nil {
			t.Fatalf("interrupt: %v", err)
		}
		r := execute(t, p, context.Background(), "1+1")
		if r.err != nil || r.done.Status != frames.StatusOK || r.done.Cancelled {
			t.Fatalf("cell %d after an idle interrupt: %+v %v\n%s", i, r.done, r.err, dumpFrames(r.frames))
		}
	}
}

// A cancel that races the sending and the start of a cell either keeps the
// cell from being sent or interrupts it; it never costs the interpreter.
// (An interrupt that landed just before time.sleep waited for the sleep,
// and a deadline that fired before any byte was written counted as a torn
// request; either way the interpreter was killed.)
func TestCancelRacingSendKeepsInterpreter(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, func(o *Options) { o.Grace = 5 * time.Second })
	execute(t, p, context.Background(), "warm = 1")
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Duration(i%40) * 5 * time.Microsecond); cancel() }()
		r := execute(t, p, ctx, "import time; time.sleep(30)")
		switch {
		case r.err == nil && r.done.Cancelled:
		case r.err != nil && errors.Is(r.err, context.Canceled) && len(r.frames) == 0:
		default:
			t.Fatalf("attempt %d: done = %+v, err = %v, frames %d; want cancelled or not sent", i, r.done, r.err, len(r.frames))
		}
	}
	if r := execute(t, p, context.Background(), "warm"); r.err != nil || !strings.Contains(dumpFrames(r.frames), `"text/plain":"1"`) {
		t.Fatalf("state lost after the cancels: %v %s", r.err, dumpFrames(r.frames))
	}
}

// An interrupt reaches a cell once: the host's wake-ups after it are not
// SIGINTs, so a cell cleaning up after KeyboardInterrupt (while its caller
// lags), a SIGINT handler of its own, and its children each see one.
func TestInterruptReachesCellOnce(t *testing.T) {
	checkClean(t, 2*time.Minute)
	trapLog := filepath.Join(t.TempDir(), "ints")
	tests := []struct {
		name   string
		code   string
		slow   bool   // the caller takes 2 ms per output frame
		stdout string // must appear
	}{
		{"cleanup after KeyboardInterrupt with a slow caller", "import time\ntry:\n    while True:\n        print('x', flush=True)\n        time.sleep(0.001)\n" +
			"except KeyboardInterrupt:\n    time.sleep(1)\n    print('cleaned', flush=True)", true, "cleaned\n"},
		{"the cell's own SIGINT handler", "import signal, time\nn = []\nsignal.signal(signal.SIGINT, lambda s, f: n.append(1))\n" +
			"print('ready', flush=True)\nt = time.time()\nwhile time.time() - t < 1.5:\n    time.sleep(0.01)\nprint('calls', len(n))", false, "calls 1\n"},
		// The shell says ready once its trap is set (a SIGINT before it ended
		// the shell, and the cell failed reading a log never written, under
		// load: 4 runs in 150), and runs on for a second after the trap ran,
		// for any second SIGINT to be counted.
		{"a child process", "import os\nos.system(\"got=0; trap 'echo int >> " + trapLog + "; got=1' INT; echo ready; i=0; " +
			"while [ $i -lt 20 ]; do sleep 0.05; i=$((i+got)); done\")\n" +
			"print('ints', open(" + strconv.Quote(trapLog) + ").read().count('int'))", false, "ints 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = 10 * time.Second })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out strings.Builder
			var frs []frames.Frame
			done, err := p.Execute(ctx, frames.Request{Code: tt.code}, func(f frames.Frame) {
				frs = append(frs, f)
				if f.Type == frames.TypeStdout {
					out.WriteString(f.Data)
					if ctx.Err() == nil && (strings.Contains(out.String(), "ready") || strings.Count(out.String(), "x") > 100) {
						time.AfterFunc(50*time.Millisecond, cancel)
					}
					if tt.slow {
						time.Sleep(2 * time.Millisecond)
					}
				}
			})
			if err != nil {
				t.Fatalf("err = %v (the interpreter should have stayed)", err)
			}
			if strings.Contains(dumpFrames(frs), `"ename":"KeyboardInterrupt"`) || !strings.Contains(out.String(), tt.stdout) {
				t.Fatalf("done %+v; stdout ends %q; want %q and no KeyboardInterrupt error; frames:\n%s", done, tail(out.String()), tt.stdout, tail(dumpFrames(frs)))
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-200):] }
