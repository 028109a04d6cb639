package faults

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// A cell that ignores SIGINT and spins is killed once the grace window
// passes, not before: the request says what happened, takes at least the
// timeout and the grace (from the cancel: the grace), its interpreter
// ends, and the next cell gets a fresh interpreter. No upper bound on the
// time, which load stretches: a kill that never comes leaves the
// interpreter spinning, and the request hangs to the watchdog.
func TestIgnoredInterrupt(t *testing.T) {
	const grace = 500 * time.Millisecond
	r := newRegistry(t, sessions.Config{Grace: grace})
	const spin = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('spinning', flush=True)\nwhile True: pass"
	tests := []struct {
		name       string
		cancel     bool // cancel the request instead of letting it time out
		wantStatus sessions.Status
		want       string
	}{
		{"timeout escalates to kill", false, sessions.StatusTimeout, "Command timed out after 1 seconds"},
		{"cancel escalates to kill", true, sessions.StatusCancelled, "did not stop within the grace window and was killed"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ses := "spin" + strconv.Itoa(i)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := newCollector()
			var cancelledAt time.Time
			if tc.cancel {
				c.onData = func(s string) {
					if strings.Contains(s, "spinning") {
						cancelledAt = time.Now()
						cancel()
					}
				}
			}
			start := time.Now()
			res, err := r.Eval(ctx, sessions.Request{Session: ses, Cells: []sessions.Cell{pyT(spin, time.Second)}}, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			cell := res.Cells[0]
			if cell.Status != tc.wantStatus || !cell.StateLost {
				t.Fatalf("cell = %+v\n%s", cell, c.text())
			}
			if !strings.Contains(c.text()+cell.Message, tc.want) {
				t.Errorf("output and message lack %q: %q / %q", tc.want, c.text(), cell.Message)
			}
			// A lower bound only: load makes the kill later, never sooner.
			least, from := time.Second+grace, "request began" // the timeout counts from the cell's start
			if tc.cancel {
				el, least, from = time.Since(cancelledAt), grace, "cancel"
			}
			if el < least {
				t.Errorf("killed %v after the %s, before the grace had run (want at least %v)", el, from, least)
			}
			for _, pid := range c.readyPIDs() {
				if !leakcheck.Gone(pid, hangBound) {
					t.Errorf("spinning interpreter %d survived the escalation", pid)
				}
			}
			res, c = eval(t, r, context.Background(), sessions.Request{Session: ses, Cells: []sessions.Cell{py("print('fresh')")}})
			if res.Status != sessions.StatusOK || !strings.Contains(c.text(), "fresh") {
				t.Fatalf("next cell: %+v\n%s", res.Cells[0], c.text())
			}
		})
	}
}

// A grandchild in its own session inherits the interpreter's stdout and
// stderr, so while it lives those pipes never reach EOF. The host must
// still notice the death, finish the cell and shut down without waiting,
// and the grandchild ends with its interpreter (its reaper kills it). The
// grandchild sleeps far longer than the watchdog, so a host that waits for
// the pipes hangs there; nothing here is timed.
func TestGrandchildHoldsPipes(t *testing.T) {
	r := newRegistry(t, sessions.Config{})
	// The grandchild escapes the interpreter's process group, as a daemon
	// would, so a group kill cannot reach it; the reaper does.
	const spawn = "import subprocess, os\np = subprocess.Popen(['sleep', '1000'], start_new_session=True)\nprint('grandchild', p.pid, flush=True)\n"
	tests := []struct {
		name       string
		code       string
		timeout    time.Duration
		wantStatus sessions.Status
	}{
		{"interpreter exits", spawn + "os._exit(5)", 0, sessions.StatusKilled},
		{"interpreter segfaults", spawn + "import ctypes\nctypes.string_at(0)", 0, sessions.StatusKilled},
		{"cell ends normally", spawn + "print('done')", 0, sessions.StatusOK},
		{"cell times out and is killed", spawn + "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", time.Second, sessions.StatusTimeout},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector()
			var grandkids []int
			c.onData = func(s string) {
				for _, line := range strings.Split(s, "\n") {
					if rest, ok := strings.CutPrefix(line, "grandchild "); ok {
						if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
							grandkids = append(grandkids, pid)
						}
					}
				}
			}
			res, err := r.Eval(context.Background(), sessions.Request{Session: "gc" + strconv.Itoa(i), Cells: []sessions.Cell{pyT(tc.code, tc.timeout)}}, c.emit)
			defer func() {
				if t.Failed() { // so a failure leaves no sleep behind
					for _, pid := range grandkids {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}()
			if err != nil {
				t.Fatal(err)
			}
			if len(grandkids) == 0 {
				t.Fatalf("no grandchild started:\n%s", c.text())
			}
			if res.Cells[0].Status != tc.wantStatus {
				t.Fatalf("status %s, want %s: %+v\n%s", res.Cells[0].Status, tc.wantStatus, res.Cells[0], c.text())
			}
			// Closing the session must not wait for the grandchild either.
			closed := make(chan struct{})
			go func() { defer close(closed); r.CloseSession("gc" + strconv.Itoa(i)) }()
			select {
			case <-closed:
			case <-time.After(hangBound): // a hang's bound, not a timing
				t.Fatal("CloseSession hangs while a grandchild holds the pipes")
			}
			for _, pid := range c.readyPIDs() {
				if !leakcheck.Gone(pid, hangBound) {
					t.Errorf("interpreter %d survived", pid)
				}
			}
			for _, pid := range grandkids {
				if !leakcheck.Gone(pid, hangBound) {
					t.Errorf("grandchild %d still ran %s after its interpreter ended", pid, hangBound)
				}
			}
		})
	}
}
