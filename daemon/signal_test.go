package daemon

import (
	"os/exec"
	"path/filepath"
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
