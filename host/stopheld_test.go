package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// The waits of an interrupt's ladder and of an interpreter's exit count
// only the time the interpreter could run, as the wait for late end marks
// does (markwait_test.go): a stop of job control (SignalGroup's SIGSTOP,
// sessions' Suspend, a one-shot run's Ctrl-Z) in one of them does not use
// it up, so the interpreter is not killed, nor its exit's status dropped,
// the moment it is continued. Each bound still ends an interpreter that
// outlives it, stopped and continued or not.

// executeAsync runs code on p in a goroutine of its own and sends what
// Execute emitted and returned on the channel it returns; on sees each
// frame as it is emitted, from that goroutine.
func executeAsync(p *Process, ctx context.Context, code string, on func(frames.Frame)) <-chan run {
	end := make(chan run, 1)
	go func() {
		var r run
		r.done, r.err = p.Execute(ctx, frames.Request{Code: code}, func(f frames.Frame) {
			r.frames = append(r.frames, f)
			on(f)
		})
		end <- r
	}()
	return end
}

// onText returns a frame callback that closes the returned channel at the
// first stdout text containing s.
func onText(s string) (func(frames.Frame), <-chan struct{}) {
	seen := make(chan struct{})
	closed := false
	return func(f frames.Frame) {
		if !closed && f.Type == frames.TypeStdout && strings.Contains(f.Data, s) {
			closed = true
			close(seen)
		}
	}, seen
}

// await waits for seen (the cell's text what); the cell ending first
// fails the test.
func await(t *testing.T, seen <-chan struct{}, end <-chan run, what string) {
	t.Helper()
	select {
	case <-seen:
	case r := <-end:
		t.Fatalf("the cell ended before it printed %q: done %+v, err %v; frames:\n%s", what, r.done, r.err, dumpFrames(r.frames))
	}
}

// stopFor stops p's group for d (the stimulus: longer than the bound under
// test), then continues it.
func stopFor(t *testing.T, p *Process, d time.Duration) {
	t.Helper()
	if err := p.SignalGroup(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP: %v", err)
	}
	time.Sleep(d)
	if err := p.SignalGroup(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT: %v: the interpreter was ended while it was stopped", err)
	}
}

// A cell that takes its KeyboardInterrupt and then ends within the grace
// window of run time ends as it would have when it is stopped in the
// window for longer than the window: it was killed at the SIGCONT.
func TestGraceHeldWhileStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const grace = 400 * time.Millisecond
	for _, tc := range []struct {
		name   string
		after  string // what the cell does once it took the interrupt
		stop   bool
		killed bool
	}{
		{"stopped past the grace, the cell ends within it", "time.sleep(0.2)", true, false},
		{"running, the cell outlives the grace", "time.sleep(30)", false, true},
		{"stopped past the grace, the cell outlives it", "time.sleep(30)", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = grace })
			code := "import time\ntry:\n    print('go', flush=True)\n    time.sleep(30)\n" +
				"except KeyboardInterrupt:\n    print('caught', flush=True)\n    " + tc.after + "\n    print('ended')\n"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onGo, started := onText("go")
			onCaught, caught := onText("caught")
			end := executeAsync(p, ctx, code, func(f frames.Frame) { onGo(f); onCaught(f) })
			await(t, started, end, "go")
			cancel()
			await(t, caught, end, "caught") // in the grace window
			if tc.stop {
				stopFor(t, p, 3*grace)
			}
			r := <-end
			if killed := errors.Is(r.err, backend.ErrKilled); killed != tc.killed {
				t.Fatalf("killed %v (done %+v, err %v), want %v; frames:\n%s", killed, r.done, r.err, tc.killed, dumpFrames(r.frames))
			}
			if !tc.killed && !strings.HasSuffix(r.stdout(), "ended\n") {
				t.Errorf("stdout %q, want the cell's end", r.stdout())
			}
		})
	}
}

// A SIGTERM handler the ladder's SIGTERM runs gets termGrace of run time
// to end the interpreter before the SIGKILL: stopped in it for longer, the
// handler ends it once continued (its exit status is the handler's, 3),
// where it was killed (SIGKILL) the moment it was.
func TestTermGraceHeldWhileStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const term = 600 * time.Millisecond
	for _, tc := range []struct {
		name   string
		after  string // what the SIGTERM handler does before it exits with 3
		stop   bool
		killed bool // by the ladder's SIGKILL
	}{
		{"stopped past termGrace, the handler ends within it", "time.sleep(0.25)", true, false},
		{"running, the handler outlives termGrace", "time.sleep(30)", false, true},
		{"stopped past termGrace, the handler outlives it", "time.sleep(30)", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace, o.termGrace = 100*time.Millisecond, term })
			code := "import os, signal, time\n" +
				"def term(n, f):\n    print('term', flush=True)\n    " + tc.after + "\n    os._exit(3)\n" +
				"signal.signal(signal.SIGTERM, term)\n" +
				"while True:\n    try:\n        print('go', flush=True)\n        time.sleep(30)\n    except KeyboardInterrupt:\n        pass\n"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onGo, started := onText("go")
			onTerm, termed := onText("term")
			end := executeAsync(p, ctx, code, func(f frames.Frame) { onGo(f); onTerm(f) })
			await(t, started, end, "go")
			cancel()
			await(t, termed, end, "term") // the grace passed: the handler runs, within termGrace
			if tc.stop {
				stopFor(t, p, 3*term)
			}
			r := <-end
			if !errors.Is(r.err, backend.ErrKilled) {
				t.Fatalf("done %+v, err %v; want ErrKilled (the ladder's SIGTERM ended it)", r.done, r.err)
			}
			<-p.Done()
			killed := p.status.Signaled() && p.status.Signal() == syscall.SIGKILL
			if killed != tc.killed || !killed && p.status.ExitStatus() != 3 {
				t.Errorf("status %v (killed by SIGKILL %v), want killed %v, else exit 3", p.status, killed, tc.killed)
			}
		})
	}
}

// A last cell's interpreter that exits with a status of its own after its
// output ended has that status reported (InterpreterExit) when it exits
// within termGrace of run time: stopped in the wait for longer, it is
// reported once continued, where the wait gave up during the stop. The
// fake runner closes its output after the exit request, then exits with 3
// at the SIGCONT.
func TestExitStatusWaitHeldWhileStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const wait = 100 * time.Millisecond
	for _, tc := range []struct {
		name     string
		stop     bool
		reported bool
	}{
		{"stopped past the wait, the exit at the SIGCONT", true, true},
		{"running past the wait", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) {
				*o = fakeOptions(t, "lateexit")
				o.termGrace = wait
			})
			p.ExitAfterNextCell()
			end := executeAsync(p, context.Background(), "pass", func(frames.Frame) {})
			<-p.pumpDone // the output ended: the wait for the exit is on
			if tc.stop {
				stopFor(t, p, 6*wait)
			} else {
				time.Sleep(6 * wait) // past the wait: the stimulus
				if err := p.SignalGroup(syscall.SIGCONT); err != nil {
					t.Fatalf("SIGCONT: %v", err)
				}
			}
			r := <-end
			if r.err != nil {
				t.Fatalf("done %+v, err %v", r.done, r.err)
			}
			reported := r.done.Status == frames.StatusError && r.done.Exit && r.done.ExitStatus == 3
			if reported != tc.reported {
				t.Errorf("exit status reported %v (done %+v), want %v; frames:\n%s", reported, r.done, tc.reported, dumpFrames(r.frames))
			}
		})
	}
}

// fakeLateExit is a runner whose one cell ends ok at once; at the exit
// request it closes its output (fds 1, 2, 3) and exits with 3 once a
// SIGCONT came.
func fakeLateExit() int {
	f, ok := fakeFirstCell(true)
	if !ok {
		return 0
	}
	frameOut, in, id := f.frames, f.in, f.id
	fmt.Fprintf(frameOut, `{"type":"started","id":%s}`+"\n"+`{"type":"done","id":%s,"status":"ok","executionCount":1,"cancelled":false,"unmarked":3}`+"\n", id, id)
	for in.Scan() { // until the exit request, or stdin's end
	}
	os.Stdout.Close()
	os.Stderr.Close()
	frameOut.Close()
	<-f.cont
	return 3
}

// A runner that has not announced position marks gets an ordered frame
// out after posWait of run time at most: stopped for longer, the frame
// still waits for the text written before it (with its mark, here at the
// SIGCONT), where it went out during the stop, ahead of that text. Running
// past the wait, it goes out first.
func TestPosWaitHeldWhileStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const wait = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		stop bool
		want string
	}{
		{"stopped past the wait, the mark at the SIGCONT", true, "started before disp done"},
		{"running past the wait", false, "started disp before done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) {
				*o = fakeOptions(t, "latepos")
				o.posWait = wait
			})
			started := make(chan struct{})
			end := executeAsync(p, context.Background(), "pass", func(f frames.Frame) {
				if f.Type == frames.TypeStarted {
					close(started) // the display is in with it, waiting
				}
			})
			<-started
			if tc.stop {
				stopFor(t, p, 6*wait)
			} else {
				time.Sleep(6 * wait) // past the wait: the stimulus
				if err := p.SignalGroup(syscall.SIGCONT); err != nil {
					t.Fatalf("SIGCONT: %v", err)
				}
			}
			r := <-end
			if r.err != nil {
				t.Fatalf("done %+v, err %v", r.done, r.err)
			}
			var got []string
			for _, f := range r.frames {
				switch f.Type {
				case frames.TypeStarted:
					got = append(got, "started")
				case frames.TypeDisplay:
					got = append(got, "disp")
				case frames.TypeStdout:
					got = append(got, strings.TrimSpace(f.Data))
				}
			}
			if got := strings.Join(append(got, "done"), " "); got != tc.want {
				t.Errorf("order %q, want %q; frames:\n%s", got, tc.want, dumpFrames(r.frames))
			}
		})
	}
}

// fakeLatePos is a runner without position marks in its ready frame whose
// one cell's display (the cell's first ordered frame, no mark owed on
// stderr) comes with its started frame, and the text before it, "before",
// with its position mark and the cell's end mark on stdout, at a SIGCONT;
// then its done.
func fakeLatePos() int {
	f, ok := fakeFirstCell(false)
	if !ok {
		return 0
	}
	frameOut, in, req, id := f.frames, f.in, f.req, f.id
	fmt.Fprintf(frameOut, `{"type":"started","id":%s}`+"\n"+`{"type":"display","id":%s,"bundle":{"text/plain":"disp"},"pos":1,"unmarked":2}`+"\n", id, id)
	<-f.cont
	os.Stdout.WriteString("before\n" + f.mark(posMarkID+"1") + f.mark(req.ID))
	fmt.Fprintf(frameOut, `{"type":"done","id":%s,"status":"ok","executionCount":1,"cancelled":false,"unmarked":2}`+"\n", id)
	for in.Scan() { // until the exit request, or stdin's end
	}
	return 0
}

// An interpreter whose output ended between cells is exiting, and its
// reaper tells how a moment after it is gone: the next cell's Execute
// fails with ErrClosed once that is known, so Death says how it ended (a
// thread's os._exit(7) while a shell cell ran: evalhost run exits 7 as
// python3). It returned at once, and Death was nil (CI, 2026-12-01:
// TestBatchRunStopsWhenStateIsLost/exit_between_cells exited 1).
func TestExecuteAfterOutputEndedWaitsForTheExit(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, func(o *Options) {
		*o = fakeOptions(t, "closethenexit")
		o.Grace = time.Minute
	})
	if r := execute(t, p, context.Background(), "pass"); r.err != nil {
		t.Fatalf("first cell: %v", r.err)
	}
	<-p.pumpDone // the output ended; the fake exits 300 ms later
	_, err := p.Execute(context.Background(), frames.Request{Code: "pass"}, func(frames.Frame) {})
	if !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("second cell: %v, want ErrClosed", err)
	}
	if d := p.Death(); d == nil || d.ExitCode != 7 {
		t.Errorf("Death() = %+v after Execute, want exit code 7", d)
	}
}

// fakeCloseThenExit is a runner whose one cell ends ok at once; then it
// closes its output (fds 1, 2, 3) and exits with 7 300 ms later, as a
// reaper reports an interpreter's end a moment after it.
func fakeCloseThenExit() int {
	f, ok := fakeFirstCell(true)
	if !ok {
		return 0
	}
	fmt.Fprintf(f.frames, `{"type":"started","id":%s}`+"\n"+`{"type":"done","id":%s,"status":"ok","executionCount":1,"cancelled":false,"unmarked":3}`+"\n", f.id, f.id)
	os.Stdout.Close()
	os.Stderr.Close()
	f.frames.Close()
	time.Sleep(300 * time.Millisecond)
	return 7
}
