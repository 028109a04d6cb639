package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A session closed or killed while Suspend holds its interpreter stopped
// ends it as a running one's is: closed, it is continued, so it reads the
// exit request (or takes the close's interrupt) and leaves cleanly, its
// atexit handlers run; and the suspension ends with it.

// atexitMark is a cell that makes the interpreter write "exit" to mark as
// it exits cleanly, prints "ready", then runs body.
func atexitMark(mark, body string) string {
	return fmt.Sprintf("import atexit\natexit.register(lambda: open(%q, 'w').write('exit'))\nprint('ready', flush=True)\n%s\n", mark, body)
}

// evalReady runs req in a goroutine and returns the interpreter's pid once
// a cell printed "ready", and the channel Eval's end comes on.
func evalReady(t *testing.T, r *Registry, req Request) (int, <-chan Result) {
	t.Helper()
	ready := make(chan int, 1)
	end := make(chan Result, 1)
	go func() {
		pid := 0
		res, err := r.Eval(context.Background(), req, func(_ int, f frames.Frame) {
			switch {
			case f.Type == frames.TypeReady:
				pid = f.PID
			case f.Type == frames.TypeStdout && strings.Contains(f.Data, "ready"):
				ready <- pid
			}
		})
		if err != nil {
			t.Errorf("Eval: %v", err)
		}
		end <- res
	}()
	select {
	case pid := <-ready:
		return pid, end
	case res := <-end:
		t.Fatalf("the cell ended before it was ready: %+v", res)
		return 0, nil
	}
}

// A suspended session's interpreter closed (CloseSession, the registry's
// Close), idle or running a cell, exits cleanly: its atexit handler runs,
// where it was SIGKILLed, stopped, after the grace and the SIGTERM's wait.
// A cell the close stopped says so, and its stopped time ends at the close.
func TestCloseSuspendedExitsCleanly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string // "" ends the cell
		close func(r *Registry)
	}{
		{"idle, CloseSession", "", func(r *Registry) { r.CloseSession("s"); _ = r.Close() }},
		{"idle, the registry's Close", "", func(r *Registry) { _ = r.Close() }},
		{"in a cell, CloseSession", "import time\ntime.sleep(60)", func(r *Registry) { r.CloseSession("s"); _ = r.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
			mark := filepath.Join(t.TempDir(), "mark")
			pid, end := evalReady(t, r, Request{Session: "s", Cwd: t.TempDir(), Batch: true, Cells: []Cell{py(atexitMark(mark, tc.body))}})
			if tc.body == "" {
				if c := (<-end).Cells[0]; c.Status != StatusOK {
					t.Fatalf("the first cell ended %s (%s)", c.Status, c.Message)
				}
			}
			suspended := time.Now()
			if !r.Suspend("s") {
				t.Fatal("Suspend said no interpreter was stopped")
			}
			testkit.WaitState(t, pid, 'T')
			tc.close(r)
			closed := time.Since(suspended)
			if tc.body != "" {
				c := (<-end).Cells[0]
				if c.Status != StatusKilled || c.Message != closedUnderCell {
					t.Errorf("the cell ended %s (%s), want killed, %q", c.Status, c.Message, closedUnderCell)
				}
				if stopped := time.Duration(c.StoppedMs * float64(time.Millisecond)); stopped > closed {
					t.Errorf("stoppedMs %v, longer than the %v from Suspend to the close's end", c.StoppedMs, closed)
				}
			}
			if b, err := os.ReadFile(mark); err != nil || string(b) != "exit" {
				t.Errorf("the atexit handler did not run (%q, %v): the stopped interpreter was killed, not continued to exit", b, err)
			}
		})
	}
}

// A suspended session whose interpreter is killed (KillSession) is no
// longer suspended: the next cell's interpreter was never stopped, and
// its result says so (stoppedMs 0), where its start counted as stopped.
func TestKillSuspendedEndsTheSuspension(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
	cwd := t.TempDir()
	pid, end := evalReady(t, r, Request{Session: "s", Cwd: cwd, Batch: true, Cells: []Cell{py("print('ready', flush=True)")}})
	<-end
	if !r.Suspend("s") {
		t.Fatal("Suspend said no interpreter was stopped")
	}
	testkit.WaitState(t, pid, 'T')
	if !r.KillSession("s") {
		t.Fatal("KillSession found no session")
	}
	res, err := r.Eval(context.Background(), Request{Session: "s", Cwd: cwd, Cells: []Cell{py("pass")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Cells[0]; c.Status != StatusOK || c.StoppedMs != 0 {
		t.Errorf("the next cell ended %s (%s), stoppedMs %v; want ok, 0 (its interpreter was never stopped)", c.Status, c.Message, c.StoppedMs)
	}
}
