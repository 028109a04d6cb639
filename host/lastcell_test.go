package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A cell sent as the last one (ExitAfterNextCell) runs and reports as any
// other, and then the runner leaves by itself, without Close: its exit
// request was already behind the cell in the pipe.
func TestExitAfterNextCell(t *testing.T) {
	checkClean(t, time.Minute)
	cases := []struct {
		name string
		code string
		// interrupt cancels the cell once it has started.
		interrupt bool
		check     func(t *testing.T, r *run, dir string)
	}{
		{name: "the cell runs, then the runner leaves", code: "x = 6 * 7\nprint(x)",
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || r.done.Status != frames.StatusOK || r.stdout() != "42\n" {
					t.Errorf("done %+v, err %v, stdout %q; want ok and 42", r.done, r.err, r.stdout())
				}
			}},
		{name: "a cell reading stdin still gets EOF, not the exit request", code: "import os\nprint(repr(os.read(0, 100)))",
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || strings.TrimSpace(r.stdout()) != "b''" {
					t.Errorf("stdout %q, err %v; want b'' (fd 0 is /dev/null)", r.stdout(), r.err)
				}
			}},
		{name: "atexit handlers run", code: "import atexit\natexit.register(lambda: open('atexit.txt', 'w').write('ran'))",
			check: func(t *testing.T, r *run, dir string) {
				if b, err := os.ReadFile(filepath.Join(dir, "atexit.txt")); err != nil || string(b) != "ran" {
					t.Errorf("atexit.txt: %q, %v; want ran", b, err)
				}
			}},
		{name: "an interrupted last cell reports cancelled", code: "import time\ntime.sleep(60)", interrupt: true,
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || !r.done.Cancelled {
					t.Errorf("done %+v, err %v; want a cancelled done", r.done, r.err)
				}
			}},
		{name: "os._exit in an atexit handler fails the cell, as python3 -c exits with it",
			code: "import atexit, os\natexit.register(lambda: os._exit(7))\nprint('ran')",
			check: func(t *testing.T, r *run, _ string) {
				e, ok := r.first(frames.TypeError)
				if r.err != nil || r.done.Status != frames.StatusError || r.stdout() != "ran\n" || !ok ||
					e.Ename != "InterpreterExit" || !strings.Contains(e.Evalue, "exited with status 7") ||
					!e.Exit || !r.done.Exit || r.done.ExitStatus != 7 {
					t.Errorf("done %+v, err %v, stdout %q, error %+v; want an InterpreterExit error naming status 7, and the exit's status 7", r.done, r.err, r.stdout(), e)
				}
			}},
		{name: "a signal at exit fails the cell",
			code: "import atexit, os, signal\natexit.register(lambda: os.kill(os.getpid(), signal.SIGKILL))",
			check: func(t *testing.T, r *run, _ string) {
				e, _ := r.first(frames.TypeError)
				if r.err != nil || r.done.Status != frames.StatusError || !strings.Contains(e.Evalue, "killed by signal 9") ||
					r.done.Signal != 9 || e.Signal != 9 {
					t.Errorf("done %+v, err %v, error %+v; want an error naming signal 9, and its number", r.done, r.err, e)
				}
			}},
		{name: "a last cell that ends its interpreter is a death, not a close", code: "import os\nos._exit(3)",
			check: func(t *testing.T, r *run, _ string) {
				var de *backend.DeathError
				if !errors.As(r.err, &de) || de.ExitCode != 3 {
					t.Errorf("err %v; want a DeathError with exit code 3", r.err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startPy(t, func(o *Options) { o.Dir = dir })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p.ExitAfterNextCell()
			r := &run{}
			r.done, r.err = p.Execute(ctx, frames.Request{Code: tc.code}, func(f frames.Frame) {
				r.frames = append(r.frames, f)
				if tc.interrupt && f.Type == frames.TypeStarted {
					cancel()
				}
			})
			<-p.Done() // the watchdog fails a runner that never leaves
			tc.check(t, r, dir)
			if _, err := p.Execute(context.Background(), frames.Request{Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
				t.Errorf("execute after the last cell: %v, want ErrClosed", err)
			}
		})
	}
}

// Without ExitAfterNextCell the runner waits for the next request: a cell
// is not an interpreter's last unless the caller says so.
func TestRunnerStaysWithoutExitAfter(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	for _, code := range []string{"x = 1", "print(x + 1)"} {
		if r := execute(t, p, context.Background(), code); r.err != nil {
			t.Fatalf("%q: %v", code, r.err)
		}
	}
	if !p.Alive() {
		t.Fatal("the runner left without being asked")
	}
}

// What a last cell's interpreter writes as it exits (atexit, finalizers, a
// non-daemon thread) is the cell's output: Execute relays it after all of
// the cell's own, before it returns, stdout and stderr in the order written.
func TestLastCellCarriesExitOutput(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	p.ExitAfterNextCell()
	code := `import atexit, sys, threading
class A:
    def __del__(self):
        print("del")
a = A()
def later():
    threading.main_thread().join()  # the cell has ended: the runner is exiting
    print("thread")
threading.Thread(target=later).start()
@atexit.register
def bye():
    print("bye")
    print("bye err", file=sys.stderr)
    sys.stdout.write("no newline")
print("cell")
print("cell err", file=sys.stderr)`
	r := execute(t, p, context.Background(), code)
	if r.err != nil || r.done.Status != frames.StatusOK || r.done.Cancelled {
		t.Fatalf("done %+v, err %v; want ok", r.done, r.err)
	}
	if r.stdout() != "cell\nthread\nbye\nno newlinedel\n" || r.stderr() != "cell err\nbye err\n" {
		t.Errorf("stdout %q, stderr %q; frames:\n%s", r.stdout(), r.stderr(), dumpFrames(r.frames))
	}
	var both strings.Builder
	for _, f := range r.frames {
		if f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
			both.WriteString(f.Data)
		}
	}
	if want := "cell\ncell err\nthread\nbye\nbye err\nno newlinedel\n"; both.String() != want {
		t.Errorf("stdout and stderr together %q, want %q; frames:\n%s", both.String(), want, dumpFrames(r.frames))
	}
}

// The wait for a last cell's interpreter to exit lasts as long as the
// cell's context: once it ends, the interpreter gets SIGINT, which ends its
// wait for threads as Ctrl-C ends python3's; one that stays on has the
// grace to leave, then it is stopped, with a warning saying why its output
// may end early. The cell reads as cancelled either way.
//
// An interpreter that takes the SIGINT gets a grace it cannot use up: its
// exit (a traceback printed, the namespace collected) is awaited, not
// timed. With 200 ms it was stopped, and warned of, under load (6 runs in
// 150 beside three busy loops and go test of two packages): the SIGINT
// had landed, but the rest of its exit took longer.
func TestLastCellExitOutlivesContext(t *testing.T) {
	checkClean(t, 2*time.Minute)
	cases := []struct {
		name, code string
		stopped    bool          // the host had to stop it
		grace      time.Duration // waited out only when stopped
	}{
		{"SIGINT ends the wait for a thread", `import threading, time
def forever():
    threading.main_thread().join()
    print("exiting", flush=True)
    time.sleep(600)
threading.Thread(target=forever).start()`, false, time.Minute},
		{"an atexit handler that ignores SIGINT is stopped", `import atexit, signal, time
@atexit.register
def stay():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("exiting", flush=True)
    time.sleep(600)`, true, 200 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = tc.grace })
			p.ExitAfterNextCell()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &run{}
			r.done, r.err = p.Execute(ctx, frames.Request{Code: tc.code}, func(f frames.Frame) {
				r.frames = append(r.frames, f)
				if f.Type == frames.TypeStdout && strings.Contains(f.Data, "exiting") {
					cancel()
				}
			})
			if r.err != nil || !r.done.Cancelled {
				t.Fatalf("done %+v, err %v; want a cancelled done", r.done, r.err)
			}
			w, warned := r.first(frames.TypeWarning)
			if warned != tc.stopped || warned && !strings.Contains(w.Message, "was still running") {
				t.Errorf("warning %+v (%v); want one saying the interpreter was stopped: %v; frames:\n%s", w, warned, tc.stopped, dumpFrames(r.frames))
			}
			// As python3 reports it: "Exception ignored in: <module 'threading'"
			// before 3.13, a bare traceback in 3.13, 3.14's _thread._shutdown
			// reports it itself, 3.15's exit as ignored on threading shutdown.
			head := "Exception ignored in: <module 'threading'"
			switch {
			case testkit.PythonAtLeast(t, 3, 15):
				head = "Exception ignored on threading shutdown:\nTraceback (most recent call last):"
			case testkit.PythonAtLeast(t, 3, 14):
				head = "Exception ignored while joining a thread in _thread._shutdown():\nTraceback (most recent call last):"
			case testkit.PythonAtLeast(t, 3, 13):
				head = "Traceback (most recent call last):"
			}
			if errText := r.stderr(); !tc.stopped && !(strings.HasPrefix(errText, head) &&
				strings.Contains(errText, "in _shutdown") && strings.Contains(errText, "KeyboardInterrupt")) {
				t.Errorf("stderr %q; want the interrupted wait reported as python3 reports it", r.stderr())
			}
			// 3.15's hook formats it as Python's traceback does: carets, no ": "
			if tail := "    _thread_shutdown()\n    ~~~~~~~~~~~~~~~~^^\nKeyboardInterrupt\n"; !tc.stopped &&
				testkit.PythonAtLeast(t, 3, 15) && !strings.HasSuffix(r.stderr(), tail) {
				t.Errorf("stderr %q; want it to end %q, as python3.15's", r.stderr(), tail)
			}
			<-p.Done()
		})
	}
}
