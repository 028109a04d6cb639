package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// A cancelled cell gets one interrupt: a second SIGINT lands in whatever
// the kernel does with the first (the cell's own except block, IPython
// formatting the traceback) and cuts it short. Each cell prints "running"
// in its try block, where the test cancels it, and takes longer over the
// interrupt than the kernel gateway's old resend period (500 ms); the
// grace window is long, so only a second interrupt could end it early.
func TestInterruptLandsOnce(t *testing.T) {
	k := ownKernel(t, KernelOptions{Grace: time.Minute})
	const (
		sleep   = "import time\ntry:\n    print('running', flush=True)\n    time.sleep(60)\n"
		cleanup = "except KeyboardInterrupt:\n    time.sleep(1.2)\n    print('cleaned up', flush=True)\n"
		// IPython formats the traceback after the cell's code ended; the
		// stand-in puts itself back before it sleeps.
		slowTraceback = "import time\ntb = get_ipython().InteractiveTB\n" +
			"def slow(*args, **kwargs):\n    del tb.structured_traceback\n    time.sleep(1.2)\n    return tb.structured_traceback(*args, **kwargs)\n" +
			"tb.structured_traceback = slow\n"
		running     = "print('running', flush=True)\ntime.sleep(60)"
		lateControl = "kernel = get_ipython().kernel\nsend = kernel._send_interrupt_children\n" +
			"def late():\n    kernel._send_interrupt_children = send\n    time.sleep(1)\n    send()\nkernel._send_interrupt_children = late\n"
	)
	cases := []struct {
		name, code string
		want       []string
	}{
		{"slow cleanup, then re-raised", sleep + cleanup + "    raise",
			[]string{"started", "stdout:running\ncleaned up\n", "error:KeyboardInterrupt:", "done:error:cancelled"}},
		{"slow cleanup, swallowed", sleep + cleanup + "print('carried on')",
			[]string{"started", "stdout:running\ncleaned up\ncarried on\n", "done:ok"}},
		{"slow traceback formatting", slowTraceback + running,
			[]string{"started", "stdout:running\n", "error:KeyboardInterrupt:", "done:error:cancelled"}},
		// As while the cell holds the GIL in a long C call: the control
		// channel answers long after the REST fallback's wait, but the
		// kernel answered on it before.
		{"slow traceback formatting, a late control channel", slowTraceback + lateControl + running,
			[]string{"started", "stdout:running\n", "error:KeyboardInterrupt:", "done:error:cancelled"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			done, err := k.Execute(ctx, frames.Request{ID: "once", Code: tc.code}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout && f.Data == "running\n" {
					cancel()
				}
				got = append(got, summary(f))
			})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			got = joinStreams(append(got, summary(done)))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("frames:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The REST interrupt is the fallback for a control channel that gives no
// answer, or answers that the kernel could not signal itself (status
// error); the fake kernel ends the cell only when it comes. Kernel.Interrupt
// takes the same ladder as a cancel, without marking the cell cancelled;
// should it not, the test cancels the cell after a minute.
func TestFakeRESTInterruptFallback(t *testing.T) {
	for _, via := range []string{"cancel", "Interrupt"} {
		t.Run(via, func(t *testing.T) { testRESTInterruptFallback(t, via == "Interrupt") })
	}
}

func testRESTInterruptFallback(t *testing.T, public bool) {
	cases := []struct {
		name  string
		reply string // the interrupt_reply's content; none when empty
		// controlAnswered: a reply came on control before (the start's
		// kernel_info_request), as ipykernel 5 gives, which has no
		// interrupt_request handler and so never answers one.
		controlAnswered bool
	}{
		{"no interrupt_reply", "", false},
		{"interrupt_reply with status error", `{"status":"error","ename":"PermissionError","evalue":"[Errno 1]","traceback":[]}`, false},
		{"control answers kernel_info but not interrupt_request", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rest := make(chan struct{}, 1)
			stop := make(chan struct{}) // the fake's end, should the REST interrupt never come
			k := scriptedGateway(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
				for _, m := range []struct{ typ, content string }{
					{"status", `{"execution_state":"busy"}`},
					{"execute_input", `{"code":"","execution_count":1}`},
				} {
					if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m.typ, parent, []byte(m.content))); err != nil {
						return err
					}
				}
				id, err := awaitRequest(ctx, conn, "interrupt_request")
				if err != nil {
					return err
				}
				if tc.reply != "" {
					if err := conn.Write(ctx, websocket.MessageText, jupyterMessage("interrupt_reply", id, []byte(tc.reply))); err != nil {
						return err
					}
				}
				select {
				case <-rest:
				case <-stop:
					return nil
				}
				for _, m := range []struct{ typ, content string }{
					{"error", `{"ename":"KeyboardInterrupt","evalue":"","traceback":[]}`},
					{"execute_reply", `{"status":"error","execution_count":1,"ename":"KeyboardInterrupt","evalue":""}`},
					{"status", `{"execution_state":"idle"}`},
				} {
					if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m.typ, parent, []byte(m.content))); err != nil {
						return err
					}
				}
				return nil
			}, nil, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/kernels/k1/interrupt" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(http.StatusNoContent)
				rest <- struct{}{}
			})
			t.Cleanup(func() { close(stop) }) // before the leak check scriptedGateway set up
			k.controlOK.Store(tc.controlAnswered)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			var interruptErr error
			if public {
				defer time.AfterFunc(time.Minute, cancel).Stop()
			}
			done, err := k.Execute(ctx, frames.Request{ID: "c", Code: "import time; time.sleep(60)"}, func(f frames.Frame) {
				if f.Type == frames.TypeStarted {
					if public {
						interruptErr = k.Interrupt()
					} else {
						cancel()
					}
				}
				got = append(got, summary(f))
			})
			if err != nil || interruptErr != nil {
				t.Fatalf("Execute: %v; Interrupt: %v", err, interruptErr)
			}
			want := "started,error:KeyboardInterrupt:,done:error:cancelled"
			if public {
				want = "started,error:KeyboardInterrupt:,done:error"
			}
			if s := strings.Join(append(got, summary(done)), ","); s != want {
				t.Errorf("frames %q, want %q", s, want)
			}
		})
	}
}

// awaitRequest reads the client's requests until one of type typ, whose
// msg_id it returns.
func awaitRequest(ctx context.Context, conn *websocket.Conn, typ string) (string, error) {
	for {
		_, raw, err := conn.Read(ctx)
		if err != nil {
			return "", fmt.Errorf("no %s: %w", typ, err)
		}
		var req message
		if json.Unmarshal(raw, &req) == nil && req.Header.MsgType == typ {
			return req.Header.MsgID, nil
		}
	}
}

// A SIGINT that comes just before a blocking call (time.sleep, a read)
// stays pending until the call returns: CPython runs its handler in the
// main thread, between bytecodes. The kernel wakes its main thread until
// the handler ran. Here the main thread blocks SIGINT, so that another
// thread takes it, and the cell announces itself only once the main
// thread waits in the blocking call (on that line, in a system call): the
// race, made certain. The traceback shows the cell, not the handler.
//
// A pipe's read is restarted after a handler installed with SA_RESTART
// (signal.siginterrupt(sig, False)), so the wake must not have it. A cell
// that resets the wake's signal to SIG_DFL would be killed by a wake: none
// is sent, and its SIGINT waits for the sleep to end.
func TestInterruptWakesTheMainThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cell reads /proc, and the wake is a real-time signal")
	}
	// The blocking call is on line 14.
	const code = `import os, signal, sys, threading, time
main = threading.main_thread().ident
r, w = os.pipe()
saved = signal.getsignal(signal.SIGRTMIN + 6)
%s
def announce():
    stat = '/proc/self/task/%%d/stat' %% os.getpid()
    while sys._current_frames()[main].f_lineno != 14 or open(stat).read().rsplit(')', 1)[1].split()[0] != 'S':
        time.sleep(0.001)
    print('running', flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
threading.Thread(target=announce).start()
try:
    %s
finally:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGRTMIN + 6, saved)
    os.close(r); os.close(w)`
	cases := []struct{ name, setup, block string }{
		{"time.sleep", "pass", "time.sleep(60)"},
		{"a pipe's read", "pass", "os.read(r, 1)"},
		{"the wake's signal reset to SIG_DFL", "signal.signal(signal.SIGRTMIN + 6, signal.SIG_DFL)", "time.sleep(3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := ownKernel(t, KernelOptions{Grace: 10 * time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			var tb string
			done, err := k.Execute(ctx, frames.Request{ID: "blocked", Code: fmt.Sprintf(code, tc.setup, tc.block)}, func(f frames.Frame) {
				switch f.Type {
				case frames.TypeStdout:
					cancel()
				case frames.TypeError:
					tb = ansi.ReplaceAllString(strings.Join(f.Traceback, "\n"), "")
				}
				got = append(got, summary(f))
			})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			want := "started,stdout:running\n,error:KeyboardInterrupt:,done:error:cancelled"
			if s := strings.Join(append(got, summary(done)), ","); s != want {
				t.Errorf("frames %q, want %q", s, want)
			}
			if !strings.Contains(tb, tc.block) || strings.Contains(tb, "evalhost") || strings.Contains(tb, "on_sigint") {
				t.Errorf("traceback:\n%s", tb)
			}
		})
	}
}

// A cell that prints the KeyboardInterrupt's traceback itself shows the
// frames plain ipykernel shows: the cell's, ending in the call the SIGINT
// interrupted (ipykernel's handler is C code, without a frame). A thread
// announces the sleep once the main thread is in it: cancelled at the
// main thread's own print, a loaded machine let the SIGINT land in that
// print's flush (the kernel's frames, ipykernel's and zmq's), as it may
// with plain ipykernel.
func TestInterruptTracebackIsTheCells(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cell reads /proc")
	}
	k := ownKernel(t, KernelOptions{Grace: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The sleep is on line 11.
	const code = `import os, sys, threading, time, traceback
main = threading.main_thread().ident
sleeping = lambda task: 'nanosleep' in open(task + 'wchan').read()
def announce():
    task = '/proc/self/task/%d/' % os.getpid()
    while sys._current_frames()[main].f_lineno != 11 or not sleeping(task):
        time.sleep(0.001)
    print('running', flush=True)
threading.Thread(target=announce).start()
try:
    time.sleep(60)
except KeyboardInterrupt:
    traceback.print_exc()`
	var stderr strings.Builder
	done, err := k.Execute(ctx, frames.Request{ID: "tb", Code: code}, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStdout:
			cancel()
		case frames.TypeStderr:
			stderr.WriteString(f.Data)
		}
	})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("Execute: %+v, %v", done, err)
	}
	tb := stderr.String()
	if strings.Count(tb, "  File ") != 1 || !strings.Contains(tb, "    time.sleep(60)\n") || !strings.HasSuffix(tb, "\nKeyboardInterrupt\n") {
		t.Errorf("traceback has other frames than the cell's:\n%s", tb)
	}
}

// ipykernel interrupts a cell awaiting at top level by cancelling it (a
// CancelledError): its SIGINT handler for one schedules the cancel with
// the event loop's call_soon, which leaves the loop asleep in its select
// until the sleep ends; the wake's handler, run just after it, wakes the
// loop. Without that, the kernel was killed at the end of the grace window.
func TestInterruptAwaitingCell(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the wake is a real-time signal")
	}
	k := ownKernel(t, KernelOptions{Grace: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	done, err := k.Execute(ctx, frames.Request{ID: "await", Code: "import asyncio\nprint('running', flush=True)\nawait asyncio.sleep(60)"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				cancel()
			}
			got = append(got, summary(f))
		})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	want := "started,stdout:running\n,error:CancelledError:,done:error:cancelled"
	if s := strings.Join(append(got, summary(done)), ","); s != want {
		t.Errorf("frames %q, want %q", s, want)
	}
	if got, _, err := run(t, k, context.Background(), frames.Request{ID: "after", Code: "import threading\n" +
		"sum(t.name == 'evalhost-wake' for t in threading.enumerate())"}); err != nil || strings.Join(got, ",") != "started,result:0,done:ok" {
		t.Errorf("the next cell: %q, %v; want no wake-up thread left", got, err)
	}
}

// A cell cancelled after Kernel.Interrupt interrupted it gets no second
// interrupt: that would land in its handling of the first. The fake's cell
// catches the interrupt and runs on, so the cell ends at the grace window,
// or when a second interrupt comes.
func TestFakeCancelAfterInterruptSendsNoSecond(t *testing.T) {
	var seconds atomic.Int32
	k := scriptedKernel(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
		write := func(typ, parent, content string) error {
			return conn.Write(ctx, websocket.MessageText, jupyterMessage(typ, parent, []byte(content)))
		}
		if err := write("status", parent, `{"execution_state":"busy"}`); err != nil {
			return err
		}
		if err := write("execute_input", parent, `{"code":"","execution_count":1}`); err != nil {
			return err
		}
		id, err := awaitRequest(ctx, conn, "interrupt_request")
		if err != nil {
			return err
		}
		if err := write("interrupt_reply", id, `{"status":"ok"}`); err != nil {
			return err
		}
		if err := write("stream", parent, `{"name":"stdout","text":"caught\n"}`); err != nil {
			return err
		}
		if _, err := awaitRequest(ctx, conn, "interrupt_request"); err != nil {
			return err // the kill closed the socket
		}
		seconds.Add(1)
		for _, m := range [][2]string{{"execute_reply", `{"status":"ok","execution_count":1}`}, {"status", `{"execution_state":"idle"}`}} {
			if err := write(m[0], parent, m[1]); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	k.grace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var interruptErr error
	_, err := k.Execute(ctx, frames.Request{ID: "c", Code: "while True: ..."}, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStarted:
			interruptErr = k.Interrupt()
		case frames.TypeStdout:
			cancel()
		}
	})
	if interruptErr != nil {
		t.Fatalf("Interrupt: %v", interruptErr)
	}
	if n := seconds.Load(); n != 0 || !errors.Is(err, backend.ErrKilled) {
		t.Errorf("%d second interrupts, Execute: %v; want none, and the kill at the grace window", n, err)
	}
}

// No interrupt goes out once the cell's execute_reply came: its code has
// ended, and a SIGINT that the kernel's control thread sends late lands in
// the next cell. The fake's cell replies, then prints, where the test
// interrupts it, and never publishes its idle: the idle watch's marker
// ends it, and comes after any interrupt the Interrupt sent.
func TestFakeNoInterruptAfterTheReply(t *testing.T) {
	old := idleWait
	idleWait = 100 * time.Millisecond
	t.Cleanup(func() { idleWait = old })
	for _, via := range []string{"cancel", "Interrupt"} {
		t.Run(via, func(t *testing.T) {
			var interrupts atomic.Int32
			k := scriptedKernel(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
				return sendThenCountInterrupts(ctx, conn, parent, [][2]string{{"status", `{"execution_state":"busy"}`}, {"execute_input", `{"code":"","execution_count":1}`},
					{"execute_reply", `{"status":"ok","execution_count":1}`}, {"stream", `{"name":"stdout","text":"after\n"}`}}, &interrupts)
			}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var interruptErr error
			done, err := k.Execute(ctx, frames.Request{ID: "c", Code: "1"}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout {
					if via == "Interrupt" {
						interruptErr = k.Interrupt()
					} else {
						cancel()
					}
				}
			})
			if err != nil || interruptErr != nil || done.Status != frames.StatusOK {
				t.Fatalf("Execute: %+v, %v; Interrupt: %v", done, err, interruptErr)
			}
			if n := interrupts.Load(); n != 0 {
				t.Errorf("%d interrupts after the reply, want none", n)
			}
		})
	}
}

// Nor does the REST interrupt go out after the reply: neither the fallback
// for a control-channel interrupt the kernel gave no answer to, nor the one
// for an interrupt_reply that says it could not signal itself, coming after
// the execute_reply. The fake replies once the interrupt_request came and
// never publishes its idle: the idle watch's marker ends the cell, after
// the fallback's wait.
func TestFakeNoRESTInterruptAfterTheReply(t *testing.T) {
	old := [...]time.Duration{idleWait, restFallback}
	idleWait, restFallback = 400*time.Millisecond, 100*time.Millisecond
	t.Cleanup(func() { idleWait, restFallback = old[0], old[1] })
	cases := []struct {
		name  string
		reply string // the interrupt_reply's content, after the execute_reply; none when empty
	}{
		{"no interrupt_reply", ""},
		{"interrupt_reply with status error", `{"status":"error","ename":"PermissionError","evalue":"[Errno 1]","traceback":[]}`},
	}
	for _, tc := range cases {
		for _, via := range []string{"cancel", "Interrupt"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				var rests atomic.Int32
				k := scriptedGateway(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
					for _, m := range [][2]string{{"status", `{"execution_state":"busy"}`}, {"execute_input", `{"code":"","execution_count":1}`}} {
						if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m[0], parent, []byte(m[1]))); err != nil {
							return err
						}
					}
					id, err := awaitRequest(ctx, conn, "interrupt_request")
					if err != nil {
						return err
					}
					msgs := []struct{ typ, parent, content string }{
						{"execute_reply", parent, `{"status":"ok","execution_count":1}`}}
					if tc.reply != "" {
						msgs = append(msgs, struct{ typ, parent, content string }{"interrupt_reply", id, tc.reply})
					}
					for _, m := range msgs {
						if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m.typ, m.parent, []byte(m.content))); err != nil {
							return err
						}
					}
					return nil
				}, nil, func(w http.ResponseWriter, r *http.Request) {
					rests.Add(1)
					w.WriteHeader(http.StatusNoContent)
				})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var interruptErr error
				_, err := k.Execute(ctx, frames.Request{ID: "c", Code: "1"}, func(f frames.Frame) {
					if f.Type == frames.TypeStarted {
						if via == "Interrupt" {
							interruptErr = k.Interrupt()
						} else {
							cancel()
						}
					}
				})
				if err != nil || interruptErr != nil {
					t.Fatalf("Execute: %v; Interrupt: %v", err, interruptErr)
				}
				if n := rests.Load(); n != 0 {
					t.Errorf("%d REST interrupts after the reply, want none", n)
				}
			})
		}
	}
}

// A cell cancelled before its code ran is interrupted at its execute_input;
// not when that comes after its execute_reply (iopub and shell are separate
// channels a gateway forwards apart). The context is cancelled before
// Execute, so that await takes the cancel before the fake's messages.
func TestFakeNoPendingInterruptAfterTheReply(t *testing.T) {
	old := idleWait
	idleWait = 100 * time.Millisecond
	t.Cleanup(func() { idleWait = old })
	var interrupts, rests atomic.Int32
	k := scriptedGateway(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
		return sendThenCountInterrupts(ctx, conn, parent, [][2]string{{"status", `{"execution_state":"busy"}`},
			{"execute_reply", `{"status":"ok","execution_count":1}`}, {"execute_input", `{"code":"","execution_count":1}`}}, &interrupts)
	}, nil, func(w http.ResponseWriter, r *http.Request) {
		rests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := k.Execute(ctx, frames.Request{ID: "c", Code: "1"}, func(frames.Frame) {}); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if n, r := interrupts.Load(), rests.Load(); n+r != 0 {
		t.Errorf("%d interrupt_requests, %d REST interrupts after the reply, want none", n, r)
	}
}
