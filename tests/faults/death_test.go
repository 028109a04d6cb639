package faults

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// A death during a cell is retried once on a fresh interpreter; a second
// death fails the cell with how the interpreter ended. Output from before
// the death is kept, and the session works afterwards.
func TestDeathMidCell(t *testing.T) {
	r := newRegistry(t, sessions.Config{})
	marker := func(t *testing.T) string { return strconv.Quote(filepath.Join(t.TempDir(), "died-once")) }
	// onceThen dies the first time only: the marker survives the interpreter.
	onceThen := func(m, die string) string {
		return "import os\nprint('before', flush=True)\nif not os.path.exists(" + m + "):\n    open(" + m + ", 'w').close()\n    " + die + "\nprint('after retry')"
	}
	tests := []struct {
		name       string
		code       func(t *testing.T) string
		wantStatus sessions.Status
		retried    bool
		want       []string // substrings of the cell's text
	}{
		{"SIGKILL self, retried once and succeeds",
			func(t *testing.T) string { return onceThen(marker(t), "os.kill(os.getpid(), 9)") },
			sessions.StatusOK, true,
			[]string{"before", "interpreter died (signal: killed); restarted it and retrying", "after retry"}},
		{"SIGKILL every time fails after one retry",
			func(*testing.T) string { return "import os\nprint('before', flush=True)\nos.kill(os.getpid(), 9)" },
			sessions.StatusKilled, true,
			[]string{"before", "interpreter died twice: signal: killed"}},
		{"os._exit retried once and succeeds",
			func(t *testing.T) string { return onceThen(marker(t), "os._exit(3)") },
			sessions.StatusOK, true,
			[]string{"before", "interpreter died (exit code 3)", "after retry"}},
		{"os._exit every time",
			func(*testing.T) string { return "import os\nprint('before', flush=True)\nos._exit(3)" },
			sessions.StatusKilled, true,
			[]string{"before", "interpreter died twice: exit code 3"}},
		{"segfault via ctypes",
			func(*testing.T) string { return "import ctypes\nprint('before', flush=True)\nctypes.string_at(0)" },
			sessions.StatusKilled, true,
			[]string{"before", "interpreter died twice: signal: segmentation fault"}},
		{"os.abort",
			func(*testing.T) string { return "import os\nos.abort()" },
			sessions.StatusKilled, true,
			[]string{"interpreter died twice: signal: aborted"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ses := "death" + strconv.Itoa(i)
			res, c := eval(t, r, context.Background(), sessions.Request{Session: ses, Cells: []sessions.Cell{py("x = 1"), py(tc.code(t))}})
			cell := res.Cells[1]
			if cell.Status != tc.wantStatus || cell.Retried != tc.retried || !cell.StateLost {
				t.Fatalf("cell = status %s retried %v stateLost %v (%s), want %s retried %v stateLost true\n%s",
					cell.Status, cell.Retried, cell.StateLost, cell.Message, tc.wantStatus, tc.retried, c.text())
			}
			checkOrder(t, c.text(), tc.want)
			if !strings.Contains(cell.Output.Text, tc.want[len(tc.want)-1]) {
				t.Errorf("cell summary lacks %q:\n%s", tc.want[len(tc.want)-1], cell.Output.Text)
			}
			// Every interpreter but the one now serving the session is gone.
			pids := c.readyPIDs()
			for _, pid := range pids[:max(len(pids)-1, 0)] {
				if !leakcheck.Gone(pid, hangBound) {
					t.Errorf("dead interpreter %d still running", pid)
				}
			}
			// The session recovers: a fresh interpreter, state honestly lost.
			res, c = eval(t, r, context.Background(), sessions.Request{Session: ses, Cells: []sessions.Cell{py("print('alive')")}})
			if res.Cells[0].Status != sessions.StatusOK || !strings.Contains(c.text(), "alive") {
				t.Fatalf("session did not recover: %+v\n%s", res.Cells[0], c.text())
			}
		})
	}
}

// A SIGKILL from outside while the cell sleeps: noticed at once (not at the
// cell's end), retried once. The cell sleeps far longer than the watchdog,
// so a host that waits for its end hangs there; nothing here is timed.
func TestExternalSIGKILL(t *testing.T) {
	r := newRegistry(t, sessions.Config{})
	m := strconv.Quote(filepath.Join(t.TempDir(), "first"))
	code := "import os, time\nif os.path.exists(" + m + "):\n    print('second')\nelse:\n    open(" + m + ", 'w').close()\n    print('first', flush=True)\n    time.sleep(1000)"
	c := newCollector()
	c.onData = func(s string) {
		if strings.Contains(s, "first") {
			pids := c.readyPIDs()
			_ = syscall.Kill(pids[len(pids)-1], syscall.SIGKILL)
		}
	}
	res, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{py(code)}}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	cell := res.Cells[0]
	if cell.Status != sessions.StatusOK || !cell.Retried || !cell.StateLost {
		t.Fatalf("cell = %+v\n%s", cell, c.text())
	}
	checkOrder(t, c.text(), []string{"first", "interpreter died (signal: killed)", "second"})
}

// checkOrder asserts that want appear in text in this order.
func checkOrder(t *testing.T, text string, want []string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("output lacks %q (in order %q):\n%s", w, want, text)
			return
		}
		rest = rest[i+len(w):]
	}
}
