package runner

import (
	"regexp"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// ansiColour is what 3.13's _colorize writes.
var ansiColour = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Where the host shows fd 2 on a terminal (EVALHOST_TTY), a script's error
// is reported as python3 3.13+ reports it there: in colour, as
// _colorize.can_colorize says (NO_COLOR...), written to stderr, its error
// frame marked reported and its traceback plain. Elsewhere (no terminal,
// fd 1 alone on one, a notebook's cell) nothing is coloured, whatever
// FORCE_COLOR says; nor before 3.13, whose python3 prints plain.
func TestErrorsColouredOnATerminal(t *testing.T) {
	const raises = "def f():\n    return 1/0\nf()"
	script := func(code string) map[string]any { return map[string]any{"code": code, "argv": []string{"-c"}} }
	tty := []string{"EVALHOST_TTY=1,2", "TERM=xterm"}
	for _, tc := range []struct {
		name   string
		env    []string
		req    map[string]any
		ename  string // the error frame's; "" for none
		colour bool   // 3.13+
	}{
		{"a script's error", tty, script(raises), "ZeroDivisionError", true},
		{"a script's syntax error", tty, script("x = (1 +"), "SyntaxError", true},
		{"to a replaced sys.stderr on fd 2", tty, script("import sys\nsys.stderr = open(2, 'w', closefd=False)\n" + raises), "ZeroDivisionError", true},
		{"a thread's", tty, script("import threading\nt = threading.Thread(target=lambda: 1/0)\nt.start(); t.join()"), "", true},
		{"a notebook's cell", tty, map[string]any{"code": raises}, "ZeroDivisionError", false},
		{"stdout alone on the terminal", []string{"EVALHOST_TTY=1", "TERM=xterm"}, script(raises), "ZeroDivisionError", false},
		{"NO_COLOR", append(tty, "NO_COLOR=1"), script(raises), "ZeroDivisionError", false},
		{"TERM=dumb", []string{"EVALHOST_TTY=1,2", "TERM=dumb"}, script(raises), "ZeroDivisionError", false},
		{"no terminal, FORCE_COLOR", []string{"FORCE_COLOR=1", "PYTHON_COLORS=1"}, script(raises), "ZeroDivisionError", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			colour := tc.colour && testkit.PythonAtLeast(t, 3, 13)
			p := start(t, startOpts{env: tc.env})
			c := p.runReq(tc.req)
			if got := strings.Contains(c.stderr, "\x1b[1;35m"); got != colour {
				t.Errorf("stderr coloured %v, want %v:\n%q", got, colour, c.stderr)
			}
			if !colour && strings.Contains(c.stderr, "\x1b") {
				t.Errorf("stderr has escape sequences: %q", c.stderr)
			}
			if tc.ename == "" {
				if _, ok := c.first(frames.TypeError); ok {
					t.Errorf("an error frame: %+v", c.frames)
				}
				return
			}
			e := wantError(t, c, tc.ename)
			tb := strings.Join(e.Traceback, "\n")
			if strings.Contains(tb, "\x1b") || strings.Contains(e.Evalue, "\x1b") {
				t.Errorf("the error frame has escape sequences: %q, %q", tb, e.Evalue)
			}
			if colour && (!e.Reported || ansiColour.ReplaceAllString(c.stderr, "") != tb+"\n") {
				t.Errorf("reported %v, traceback\n%q\nstderr without its colours\n%q\nwant reported, the same", e.Reported, tb, ansiColour.ReplaceAllString(c.stderr, ""))
			}
			// A replaced sys.stderr has the report anyway, coloured or not.
			if replaced := strings.Contains(tc.req["code"].(string), "sys.stderr = "); !colour && e.Reported != replaced {
				t.Errorf("reported %v, want %v", e.Reported, replaced)
			}
		})
	}
}
