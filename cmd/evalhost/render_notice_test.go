package main

import (
	"bytes"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// A one-shot run holds the host's notice to what follows it: a cell whose
// interpreter exited as a script's process (os._exit) drops it, as python3
// prints nothing; any other shows it where it came.
func TestRunHoldsANoticeToTheCellEnd(t *testing.T) {
	const msg = "interpreter died: exit code 3"
	exited := sessions.CellResult{Status: sessions.StatusKilled, Exited: true, ExitStatus: 3, Message: msg, StateLost: true}
	signalled := sessions.CellResult{Status: sessions.StatusKilled, Message: "interpreter died: signal: killed", StateLost: true}
	termed := sessions.CellResult{Status: sessions.StatusKilled, Message: "interpreter died: signal: terminated", StateLost: true, Signal: 15}
	for _, tc := range []struct {
		name   string
		hold   bool
		notice string
		then   func(h *humanRenderer)
		want   string
	}{
		{"own exit drops its notice", true, msg, func(h *humanRenderer) { h.cellEnd(exited) }, ""},
		{"a signal's notice stays when run does not die of it", true, signalled.Message, func(h *humanRenderer) {
			h.diesOf = func(n int) bool { return n == 15 }
			h.cellEnd(signalled)
		}, "[interpreter died: signal: killed]\n[cell 1 was killed (interpreter state was lost)]\n"},
		{"a signal run dies of drops its notice", true, termed.Message, func(h *humanRenderer) {
			h.diesOf = func(n int) bool { return n == 15 }
			h.cellEnd(termed)
		}, ""},
		{"Ctrl-\\ drops every notice", true, "the interpreter was stopped while the cell ran", func(h *humanRenderer) {
			h.silenced = func() bool { return true }
			h.cellEnd(sessions.CellResult{Status: sessions.StatusCancelled, Message: "cancelled", StateLost: true, DurationMs: 5})
		}, ""},
		{"another notice stays", true, "timed out", func(h *humanRenderer) { h.cellEnd(exited) }, "[timed out]\n"},
		{"shown before later output", true, "note", func(h *humanRenderer) {
			h.stream(0, frames.TypeStderr, []byte("later\n"))
			h.cellEnd(exited)
		}, "[note]\nlater\n"},
		{"an attached run shows it at once", false, msg, func(h *humanRenderer) {
			h.stream(0, frames.TypeStderr, []byte("later\n"))
		}, "[" + msg + "]\nlater\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), false)
			h.holdNotices = tc.hold
			h.frame(0, frames.Frame{Type: frames.TypeStderr, Data: "[" + tc.notice + "]\n"})
			tc.then(h)
			h.end(sessions.Result{})
			if errs.String() != tc.want || out.Len() > 0 {
				t.Errorf("stderr %q, stdout %q; want stderr %q", errs.String(), out.String(), tc.want)
			}
		})
	}
}

// A cell's end line says its status once, also when its message starts by
// saying it (as --json's reader needs).
func TestCellEndSaysTheStatusOnce(t *testing.T) {
	const killed = "the interpreter did not stop within the grace window and was killed"
	for _, tc := range []struct {
		name string
		res  sessions.CellResult
		want string
	}{
		{"a timeout that killed", sessions.CellResult{Status: sessions.StatusTimeout, Message: "timed out; " + killed, StateLost: true, DurationMs: 3042},
			"[cell 1 timed out: " + killed + " (interpreter state was lost) after 3.042s]\n"},
		{"a cancel that killed", sessions.CellResult{Status: sessions.StatusCancelled, Message: "cancelled; " + killed, StateLost: true, DurationMs: 2000},
			"[cell 1 was cancelled: " + killed + " (interpreter state was lost) after 2s]\n"},
		{"an error's message is kept whole", sessions.CellResult{Status: sessions.StatusError, Message: "timed out; x", DurationMs: 1},
			"[cell 1 failed: timed out; x after 1ms]\n"},
		// Stopped by a Ctrl-Z for 4.5 s with --timeout 3: it ran 3 s.
		{"a timeout after a stop says the run time", sessions.CellResult{Status: sessions.StatusTimeout, DurationMs: 7561.5, StoppedMs: 4500.25},
			"[cell 1 timed out after 3.061s, not counting 4.5s stopped]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), false)
			h.cellEnd(tc.res)
			if errs.String() != tc.want {
				t.Errorf("stderr %q, want %q", errs.String(), tc.want)
			}
		})
	}
}

// A failed cell whose traceback was shown ends without a line of its own,
// as python3's stderr ends with the traceback; one without a shown error
// still says it failed. So does an interrupted one whose KeyboardInterrupt
// was shown.
func TestFailedCellEndsWithItsTraceback(t *testing.T) {
	failed := sessions.CellResult{Status: sessions.StatusError, ExecutionCount: 1, DurationMs: 5}
	interrupted := sessions.CellResult{Status: sessions.StatusCancelled, ExecutionCount: 1, DurationMs: 5}
	keyboard := []frames.Frame{{Type: frames.TypeError, Ename: "KeyboardInterrupt", Traceback: []string{"KeyboardInterrupt"}}}
	for _, tc := range []struct {
		name   string
		frames []frames.Frame
		res    sessions.CellResult
		want   string
	}{
		{"a traceback shown", []frames.Frame{{Type: frames.TypeError, Ename: "ZeroDivisionError", Evalue: "x", Traceback: []string{"ZeroDivisionError: x"}}},
			failed, "ZeroDivisionError: x\n"},
		{"no error frame", nil, failed, "[cell 1 failed after 5ms]\n"},
		{"interrupted, its traceback shown", keyboard, interrupted, "KeyboardInterrupt\n"},
		{"interrupted, no error frame", nil, interrupted, "[cell 1 was cancelled after 5ms]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), false)
			for _, f := range tc.frames {
				h.frame(0, f)
			}
			h.cellEnd(tc.res)
			if errs.String() != tc.want {
				t.Errorf("stderr %q, want %q", errs.String(), tc.want)
			}
		})
	}
}

// Cells that never started because the run was cancelled before their
// turn are told in one line, whatever their number, after the line of a
// cell that did run.
func TestNotRunCellsInOneLine(t *testing.T) {
	notRun := func(i int) sessions.CellResult {
		return sessions.CellResult{Index: i, Status: sessions.StatusCancelled, Message: "request cancelled before the cell started", CancelledBeforeStart: true}
	}
	timedOut := sessions.CellResult{Index: 0, Status: sessions.StatusTimeout, Message: "timed out", DurationMs: 1000}
	for _, tc := range []struct {
		name  string
		cells []sessions.CellResult
		want  string
	}{
		{"one", []sessions.CellResult{timedOut, notRun(1)}, "[cell 1 timed out: timed out after 1s]\n[cell 2 was not run: the run was cancelled before it started]\n"},
		{"many", []sessions.CellResult{timedOut, notRun(1), notRun(2), notRun(3)},
			"[cell 1 timed out: timed out after 1s]\n[cells 2\u20134 were not run: the run was cancelled before they started]\n"},
		{"apart", []sessions.CellResult{notRun(0), notRun(2), notRun(3)},
			"[cell 1 was not run: the run was cancelled before it started]\n[cells 3\u20134 were not run: the run was cancelled before they started]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), false)
			h.holdNotices = true
			for _, c := range tc.cells {
				h.cellEnd(c)
			}
			h.end(sessions.Result{})
			if errs.String() != tc.want || out.Len() > 0 {
				t.Errorf("stderr %q, stdout %q; want stderr %q", errs.String(), out.String(), tc.want)
			}
		})
	}
}
