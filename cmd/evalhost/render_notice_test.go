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
	for _, tc := range []struct {
		name   string
		hold   bool
		notice string
		then   func(h *humanRenderer)
		want   string
	}{
		{"own exit drops its notice", true, msg, func(h *humanRenderer) { h.cellEnd(exited) }, ""},
		{"a signal's notice stays", true, signalled.Message, func(h *humanRenderer) { h.cellEnd(signalled) },
			"[interpreter died: signal: killed]\n[cell 1 was killed (interpreter state was lost)]\n"},
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
