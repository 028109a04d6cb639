package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// The text of a display's HTML reaches the terminal as the dump has it:
// escape sequences removed whole, raw or made by an entity, not their
// control bytes alone (an OSC 52 left "]52;c;…" on the screen).
func TestRunShowsHTMLSanitisedAsTheDump(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"OSC 52", `a\u001b]52;c;aGk=\u0007b`, "ab\n"},
		{"OSC 52 as entities", `a&#27;]52;c;aGk=&#7;b`, "ab\n"},
		{"CSI clear screen", `a\u001b[2Jb &#x1b;[H&#27;[2Jc`, "ab c\n"},
		{"C1 controls", `a\u009b2Jb\u0085c`, "a2Jbc\n"},
		{"kept", `<p>a</p><table><tr><td>b</td><td>c</td></tr></table>`, "a\nb\tc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bundle frames.Bundle
			if err := json.Unmarshal([]byte(`{"text/plain":"","text/html":"`+tc.html+`"}`), &bundle); err != nil {
				t.Fatal(err)
			}
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), false)
			h.frame(0, frames.Frame{Type: frames.TypeDisplay, Bundle: bundle})
			if out.String() != tc.want || errs.Len() > 0 {
				t.Errorf("stdout %q, stderr %q; want %q", out.String(), errs.String(), tc.want)
			}
		})
	}
}

// An error frame marked reported (the script's own sys.excepthook, or a
// replaced sys.stderr, reported it) shows no traceback, as python3 prints
// nothing past the report; another error shows its traceback. Neither
// gets a "[cell failed]" line, unless bounded: the tail goes to stdout,
// and stderr must still say the cell failed. A bounded tail drops the
// reported traceback too.
func TestRunShowsNoReportedTraceback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reported bool
		bounded  bool
		status   sessions.Status // StatusError when empty
		tail     string
		stdout   string
		stderr   string
	}{
		{name: "reported", reported: true},
		{name: "not reported", stderr: "Traceback\nValueError: x\n"},
		{name: "reported, bounded", reported: true, bounded: true, tail: "HOOK\nTraceback\nValueError: x\n", stdout: "HOOK\n",
			stderr: "[cell 1 failed after 5ms]\n"},
		{name: "not reported, bounded", bounded: true, tail: "Traceback\nValueError: x\n",
			stdout: "Traceback\nValueError: x\n", stderr: "[cell 1 failed after 5ms]\n"},
		// A KeyboardInterrupt the runner reported itself, in colour on a terminal
		{name: "reported, cancelled", reported: true, status: sessions.StatusCancelled},
		{name: "not reported, cancelled", status: sessions.StatusCancelled, stderr: "Traceback\nValueError: x\n"},
		{name: "reported, cancelled, bounded", reported: true, bounded: true, status: sessions.StatusCancelled,
			tail: "Traceback\nValueError: x\n", stderr: "[cell 1 was cancelled after 5ms]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			h := newHumanRenderer(&out, &errs, t.TempDir(), tc.bounded)
			h.pythonExits = true
			h.frame(0, frames.Frame{Type: frames.TypeError, Ename: "ValueError", Evalue: "x",
				Traceback: []string{"Traceback", "ValueError: x"}, Reported: tc.reported})
			res := sessions.CellResult{Status: cmp.Or(tc.status, sessions.StatusError), ExecutionCount: 1, DurationMs: 5}
			res.Output.Text = tc.tail
			h.cellEnd(res)
			if out.String() != tc.stdout || errs.String() != tc.stderr {
				t.Errorf("stdout %q, stderr %q; want %q, %q", out.String(), errs.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

// A bounded tail loses the SystemExit traceback, and sys.exit's message
// the runner wrote before it goes with it (gone: the cell's end prints it
// on stderr), also where the tail begins in the message or after it,
// when the output held it (elided); not held (a replaced sys.stderr kept
// it), nothing is gone.
func TestWithoutTracebackTakesTheExitMessage(t *testing.T) {
	const tb = "Traceback\nSystemExit: a\nb"
	for _, tc := range []struct {
		name, tail string
		elided     bool
		want       string
		gone       bool
	}{
		{"all in the tail", "out\na\nb\n" + tb + "\nat exit\n", false, "out\nat exit\n", true},
		{"the tail starts in the message", "b\n" + tb + "\n", true, "", true},
		{"the tail starts at the traceback", tb + "\nat exit\n", true, "at exit\n", true},
		{"the tail starts in the traceback", "SystemExit: a\nb\n", true, "", true},
		{"the output never held it", tb + "\n", false, "", false},
		{"the output never held it, a part of the traceback", "b\n", false, "", false},
		{"other text before the traceback", "out\n" + tb + "\n", true, "out\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gone := withoutTraceback(tc.tail, tb, "a\nb", tc.elided)
			if got != tc.want || gone != tc.gone {
				t.Errorf("withoutTraceback(%q) = %q, gone %v; want %q, %v", tc.tail, got, gone, tc.want, tc.gone)
			}
		})
	}
}

// Whether the output ended with the message is told from its kept end,
// bounded: a message longer than what is kept is told by its own end.
func TestEndsWithAKeptEnd(t *testing.T) {
	full := bytes.Repeat([]byte("x"), keptWritten)
	for _, tc := range []struct {
		name    string
		written []byte
		s       string
		want    bool
	}{
		{"ends with it", []byte("out\nbye\n"), "bye\n", true},
		{"does not", []byte("out\n"), "bye\n", false},
		{"shorter than it, not all kept", []byte("e\n"), "bye\n", false},
		{"all kept is its end", full, "y" + string(full), true},
		{"all kept is not its end", full, string(full[1:]) + "y", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := endsWith(tc.written, tc.s); got != tc.want {
				t.Errorf("endsWith = %v, want %v", got, tc.want)
			}
		})
	}
}
