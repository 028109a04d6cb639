package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// The signal op refuses what it cannot send, and says sent false for a
// request that runs no cell of this client's: nothing else is signalled.
func TestSignalOpRefusesAndAnswers(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cases := []struct {
		name string
		op   map[string]any
		want string // a request_error containing this, or "sent false"
	}{
		{"bad to", map[string]any{"op": OpSignal, "id": "run", "signal": 15, "to": "group"}, `"to" must be`},
		{"no to", map[string]any{"op": OpSignal, "id": "run", "signal": 15}, `"to" must be`},
		{"signal 0", map[string]any{"op": OpSignal, "id": "run", "signal": 0, "to": SignalCell}, `"signal" must be a signal number`},
		{"signal 65", map[string]any{"op": OpSignal, "id": "run", "signal": 65, "to": SignalCell}, `"signal" must be a signal number`},
		{"SIGSTOP", map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGSTOP), "to": SignalInterpreter}, "SIGSTOP is not passed on"},
		{"job control of SIGTERM", map[string]any{"op": OpSignal, "id": "run", "signal": 15, "to": SignalJob}, "job control takes SIGTSTP"},
		{"no such request", map[string]any{"op": OpSignal, "id": "nope", "signal": 15, "to": SignalInterpreter, "n": 7}, "sent false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Send(tc.op); err != nil {
				t.Fatal(err)
			}
			line, err := c.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch typ := gjson.GetBytes(line, "type").String(); {
			case tc.want == "sent false":
				if typ != TypeSignalled || gjson.GetBytes(line, "sent").Bool() || gjson.GetBytes(line, "n").Int() != 7 {
					t.Fatalf("got %s; want a signalled line, sent false, n 7", line)
				}
			case typ != "request_error" || !strings.Contains(gjson.GetBytes(line, "error").String(), tc.want):
				t.Fatalf("got %s; want a request_error saying %s", line, tc.want)
			}
		})
	}
}

// A signal passed on reaches the handler the running cell set, and the
// cell goes on; one for a request still queued behind another client's
// reaches nobody (that client's cell is not its sender's), nor does one
// reach the session of that name in another directory.
func TestSignalOpReachesTheRunningCell(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	paths, _ := serveHome(t, time.Hour)
	cwd := filepath.Dir(paths.Dir)
	a, b, c := dialed(t, paths), dialed(t, paths), dialed(t, paths)
	const cell = `import signal, time
got = []
signal.signal(signal.SIGUSR1, lambda n, f: got.append(n))
print('waiting', flush=True)
while not got: time.sleep(0.01)
time.sleep(0.3)
print('handled', got)`
	// c's session has the same name in another directory: another's,
	// which a's signal must not reach.
	other := t.TempDir()
	c.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": other,
		"cells": []map[string]string{{"language": "py", "code": cell}}})
	readUntil(t, c, "stdout")
	a.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": cell}}})
	readUntil(t, a, "stdout")
	b.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": "1"}}})
	b.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGUSR1), "to": SignalInterpreter, "n": 1})
	if line := readUntil(t, b, TypeSignalled); gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("a queued request's signal was sent: %s", line)
	}
	a.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGUSR1), "to": SignalInterpreter, "n": 2})
	if line := readUntil(t, a, TypeSignalled); !gjson.GetBytes(line, "sent").Bool() || gjson.GetBytes(line, "n").Int() != 2 {
		t.Fatalf("got %s; want sent true, n 2", line)
	}
	end := readUntil(t, a, "cell_end")
	if out := gjson.GetBytes(end, "output.text").String(); gjson.GetBytes(end, "status").String() != "ok" || out != "waiting\nhandled [10]\n" {
		t.Fatalf("the cell ended %s; want ok, its handler run once", end)
	}
	c.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGUSR1), "to": SignalInterpreter, "n": 3})
	if line := readUntil(t, c, TypeSignalled); !gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("the other cwd's cell had ended: %s", line)
	}
	end = readUntil(t, c, "cell_end")
	if out := gjson.GetBytes(end, "output.text").String(); out != "waiting\nhandled [10]\n" {
		t.Fatalf("the other cwd's cell ended %s; want its handler run once, by its own client's signal", end)
	}
}

// A client whose request is still queued behind another's in its session
// has stopped nothing with a Ctrl-Z (sent false): when it leaves, the
// other client's interpreter, which that one stopped, stays stopped
// (continueStopped continues only what its own job control stopped).
func TestSignalOpQueuedClientLeavingContinuesNothing(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	queued := awaitQueued(t) // a's, then b's
	paths, _ := serveHome(t, time.Hour)
	cwd := filepath.Dir(paths.Dir)
	a, b := dialed(t, paths), dialed(t, paths)
	a.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(30)"}}})
	pid := strings.TrimSpace(gjson.GetBytes(readUntil(t, a, "stdout"), "data").String())
	<-queued
	a.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGTSTP), "to": SignalJob, "n": 1})
	if line := readUntil(t, a, TypeSignalled); !gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("a's Ctrl-Z was not sent: %s", line)
	}
	awaitState(t, pid, true, "a's Ctrl-Z did not stop it")
	b.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": "1"}}})
	<-queued
	b.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGTSTP), "to": SignalJob, "n": 1})
	if line := readUntil(t, b, TypeSignalled); gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("a queued request's Ctrl-Z was sent: %s", line)
	}
	// b leaves: the process reads its end, continues what b stopped,
	// cancels b's request, answers it and closes.
	if err := b.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := b.Next(); err != nil {
			break
		}
	}
	if st := procState(t, pid); st != "T" {
		t.Fatalf("a's interpreter is in state %s once b left; want T, still stopped by a's Ctrl-Z", st)
	}
	a.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGCONT), "to": SignalJob, "n": 2})
	readUntil(t, a, TypeSignalled)
	a.Send(map[string]any{"op": "cancel", "id": "run"})
	readUntil(t, a, "cell_end")
}

// A Ctrl-Z that came while the request was queued behind another
// client's stops its cell as it starts, as a stopped python3 runs
// nothing; its fg continues it.
func TestSignalOpQueuedStopHoldsTheStart(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	queued := awaitQueued(t) // a's, then b's
	paths, _ := serveHome(t, time.Hour)
	cwd := filepath.Dir(paths.Dir)
	a, b := dialed(t, paths), dialed(t, paths)
	gate := filepath.Join(t.TempDir(), "gate")
	a.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": "import os, time\nprint(os.getpid(), flush=True)\nwhile not os.path.exists(" + strconv.Quote(gate) + "): time.sleep(0.01)"}}})
	// b's cell runs in the same interpreter, after a's.
	pid := strings.TrimSpace(gjson.GetBytes(readUntil(t, a, "stdout"), "data").String())
	<-queued
	b.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "py", "code": "import time\nprint('b', flush=True)\ntime.sleep(30)"}}})
	<-queued
	b.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGTSTP), "to": SignalJob, "n": 1})
	if line := readUntil(t, b, TypeSignalled); gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("a queued request's Ctrl-Z was sent: %s", line)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	readUntil(t, a, "cell_end")
	readUntil(t, b, "started")
	awaitState(t, pid, true, "want T, stopped by the Ctrl-Z b had while queued, as its cell starts")
	b.Send(map[string]any{"op": OpSignal, "id": "run", "signal": int(syscall.SIGCONT), "to": SignalJob, "n": 2})
	if line := readUntil(t, b, TypeSignalled); !gjson.GetBytes(line, "sent").Bool() {
		t.Fatalf("b's fg was not sent: %s", line)
	}
	awaitState(t, pid, false, "still stopped after b's fg")
	b.Send(map[string]any{"op": "cancel", "id": "run"})
	if end := readUntil(t, b, "cell_end"); !strings.HasPrefix(gjson.GetBytes(end, "output.text").String(), "b\n") {
		t.Fatalf("b's cell ended %s; want its output, b", end)
	}
}

// procState is the state letter of process pid (T: stopped).
func procState(t *testing.T, pid string) string {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))[0]
}

// awaitState waits for process pid to come to state T (stopped), or, with
// stopped false, to leave it.
func awaitState(t *testing.T, pid string, stopped bool, why string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); (procState(t, pid) == "T") != stopped; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %s is in state %s: %s", pid, procState(t, pid), why)
		}
	}
}

// awaitQueued receives once each time a request has its place in its
// session's queue (afterQueue), for the test's time; set before the
// process serves (serveHome), whose end its cleanup comes after.
func awaitQueued(t *testing.T) <-chan struct{} {
	queued := make(chan struct{}, 2)
	afterQueue = func(string) { queued <- struct{}{} }
	t.Cleanup(func() { afterQueue = func(string) {} })
	return queued
}
