package runner

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// An execute request's "terminal" tells its cell alone what EVALHOST_TTY
// tells a whole interpreter (run --session at a terminal, then piped): the
// cell after one without it sees no terminal, and its variables as they
// were, but for one the cell changed itself.
func TestRequestTerminal(t *testing.T) {
	const state = "import sys, os, shutil; print(sys.stdout.isatty(), sys.stderr.isatty(), sys.stdout.line_buffering, " +
		"*shutil.get_terminal_size(), os.isatty(1), os.environ.get('FORCE_COLOR'), os.environ.get('NO_COLOR'))"
	both := map[string]any{"fds": []int{1, 2}, "env": map[string]any{"COLUMNS": "100", "LINES": "30", "FORCE_COLOR": "1", "NO_COLOR": nil}}
	p := start(t, startOpts{env: []string{"COLUMNS=33", "NO_COLOR=1"}})
	for _, step := range []struct {
		name     string
		code     string
		terminal any // nil: none sent
		want     string
		ename    string // a RequestError's
	}{
		{"none", state, nil, "False False False 33 24 False None 1", ""},
		{"stdout and stderr", state, both, "True True True 100 30 False 1 None", ""},
		{"taken back", state, nil, "False False False 33 24 False None 1", ""},
		{"stderr alone", state, map[string]any{"fds": []int{2}}, "False True False 33 24 False None 1", ""},
		{"stdout alone", state, map[string]any{"fds": []int{1}}, "True False True 33 24 False None 1", ""},
		{"a cell's own change stays", "import os; os.environ['COLUMNS'] = '7'; del os.environ['FORCE_COLOR']", both, "", ""},
		{"after the change", state, nil, "False False False 7 24 False None 1", ""},
		{"a bad fd", state, map[string]any{"fds": []int{3}}, "", "RequestError"},
		{"a NUL in a value", state, map[string]any{"fds": []int{1, 2}, "env": map[string]any{"COLUMNS": "1\x00"}}, "", "RequestError"},
		{"nothing left of them", state, nil, "False False False 7 24 False None 1", ""},
	} {
		t.Run(step.name, func(t *testing.T) {
			req := map[string]any{"code": step.code}
			if step.terminal != nil {
				req["terminal"] = step.terminal
			}
			c := p.runReq(req)
			if step.ename != "" {
				wantError(t, c, step.ename)
				return
			}
			if e, ok := c.first(frames.TypeError); ok {
				t.Fatalf("error: %s: %s\n%s", e.Ename, e.Evalue, strings.Join(e.Traceback, "\n"))
			}
			if got := strings.TrimSpace(c.stdout); got != step.want {
				t.Errorf("stdout %q, want %q", got, step.want)
			}
		})
	}
}

// The cells of one request are one script (run --session FILE.py, whose
// "# %%" cells are sent together): a variable an earlier cell changed
// keeps the cell's value in the later ones, as a script's change lasts in
// python3 at a terminal, where the terminal set it before the script
// started. The terminal's "request" says which cells are one request; a
// later request's cells, or cells without one, get the terminal's values.
func TestRequestTerminalOneRequest(t *testing.T) {
	const state = "import os; print(os.environ.get('COLUMNS'), os.environ.get('LINES'), os.environ.get('NO_COLOR'))"
	terminal := func(request string) map[string]any {
		t := map[string]any{"fds": []int{1, 2}, "env": map[string]any{"COLUMNS": "100", "LINES": "30", "NO_COLOR": "1"}}
		if request != "" {
			t["request"] = request
		}
		return t
	}
	p := start(t, startOpts{env: []string{"COLUMNS=33"}})
	for _, step := range []struct {
		name     string
		code     string
		terminal any
		want     string
		ename    string
	}{
		{"the request's first cell changes two", "import os; os.environ['COLUMNS'] = '7'; del os.environ['NO_COLOR']", terminal("r1"), "", ""},
		{"its second cell sees the changes", state, terminal("r1"), "7 30 None", ""},
		{"and changes one again", "import os; os.environ['COLUMNS'] = '8'", terminal("r1"), "", ""},
		{"its third cell", state, terminal("r1"), "8 30 None", ""},
		{"the next request gets the terminal's", state, terminal("r2"), "100 30 1", ""},
		{"a cell without a request id too", "import os; os.environ['LINES'] = '9'", terminal(""), "", ""},
		{"and the one after it", state, terminal(""), "100 30 1", ""},
		{"no terminal: as the cells left them", state, nil, "8 9 None", ""},
		{"a request id that is not a string", state, map[string]any{"fds": []int{1}, "request": 1}, "", "RequestError"},
	} {
		t.Run(step.name, func(t *testing.T) {
			req := map[string]any{"code": step.code}
			if step.terminal != nil {
				req["terminal"] = step.terminal
			}
			c := p.runReq(req)
			if step.ename != "" {
				wantError(t, c, step.ename)
				return
			}
			if e, ok := c.first(frames.TypeError); ok {
				t.Fatalf("error: %s: %s\n%s", e.Ename, e.Evalue, strings.Join(e.Traceback, "\n"))
			}
			if got := strings.TrimSpace(c.stdout); got != step.want {
				t.Errorf("stdout %q, want %q", got, step.want)
			}
		})
	}
}

// A script's error in a cell whose request has a terminal with stderr on
// it is coloured as python3 3.13+ colours it there; the next cell's,
// without one, is plain (TestErrorsColouredOnATerminal for EVALHOST_TTY).
func TestRequestTerminalColours(t *testing.T) {
	if !testkit.PythonAtLeast(t, 3, 13) {
		t.Skip("python3 colours its reports from 3.13")
	}
	p := start(t, startOpts{env: []string{"TERM=xterm"}})
	raises := func(terminal any) map[string]any {
		req := map[string]any{"code": "def f():\n    return 1/0\nf()", "argv": []string{"-c"}}
		if terminal != nil {
			req["terminal"] = terminal
		}
		return req
	}
	for _, step := range []struct {
		name     string
		terminal any
		colour   bool
	}{
		{"no terminal", nil, false},
		{"stderr on one", map[string]any{"fds": []int{1, 2}}, true},
		{"taken back", nil, false},
		{"stdout alone on one", map[string]any{"fds": []int{1}}, false},
		{"FORCE_COLOR off one", map[string]any{"fds": []int{}, "env": map[string]any{"FORCE_COLOR": "1"}}, false},
		{"NO_COLOR", map[string]any{"fds": []int{1, 2}, "env": map[string]any{"NO_COLOR": "1"}}, false},
	} {
		t.Run(step.name, func(t *testing.T) {
			c := p.runReq(raises(step.terminal))
			wantError(t, c, "ZeroDivisionError")
			if got := strings.Contains(c.stderr, "\x1b[1;35m"); got != step.colour {
				t.Errorf("stderr coloured %v, want %v:\n%q", got, step.colour, c.stderr)
			}
			if !step.colour && strings.Contains(c.stderr, "\x1b") {
				t.Errorf("stderr has escape sequences: %q", c.stderr)
			}
		})
	}
}

// A cell's own sys.stdout.reconfigure of its buffering lasts, as it would
// in one python3 process, whatever the requests say of a terminal: the
// line buffering a terminal's cell gets is taken back only where the
// cells did not choose it themselves.
func TestRequestTerminalKeepsChosenBuffering(t *testing.T) {
	const state = "import sys; print(sys.stdout.line_buffering, sys.stdout.write_through)"
	tty := map[string]any{"fds": []int{1, 2}}
	type bufStep struct {
		code     string
		terminal any // nil: none sent
		want     string
	}
	for _, tc := range []struct {
		name  string
		steps []bufStep
	}{
		{"line buffering chosen at a terminal", []bufStep{
			{"import sys; sys.stdout.reconfigure(line_buffering=True)", tty, ""},
			{state, nil, "True False"},
			{state, tty, "True False"},
			{state, nil, "True False"},
		}},
		{"block buffering chosen, then a terminal", []bufStep{
			{"import sys; sys.stdout.reconfigure(line_buffering=False)", nil, ""},
			{state, tty, "False False"},
			{state, nil, "False False"},
		}},
		{"write_through chosen at a terminal", []bufStep{
			{"import sys; sys.stdout.reconfigure(write_through=True)", tty, ""},
			{state, nil, "False True"},
			{state, tty, "True True"},
		}},
		{"not chosen: the terminal's alone", []bufStep{
			{state, tty, "True False"},
			{state, nil, "False False"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{})
			for i, step := range tc.steps {
				req := map[string]any{"code": step.code}
				if step.terminal != nil {
					req["terminal"] = step.terminal
				}
				c := p.runReq(req)
				if e, ok := c.first(frames.TypeError); ok {
					t.Fatalf("cell %d: %s: %s", i, e.Ename, e.Evalue)
				}
				if got := strings.TrimSpace(c.stdout); got != step.want {
					t.Errorf("cell %d: stdout %q, want %q", i, got, step.want)
				}
			}
		})
	}
}

// The runner's sys.stdout and sys.stderr, of classes of its own, read as
// python3's: their types, their reprs and the errors that name them.
func TestStdStreamsTypesAsPython(t *testing.T) {
	const code = "import sys\nfor s in (sys.stdout, sys.stderr):\n    print(type(s), repr(s).split(' encoding')[0])\n" +
		"    try: s.nope\n    except AttributeError as e: print(e)\n"
	out, err := exec.Command(testkit.Python(t), "-c", code).Output()
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, startOpts{})
	if c := p.runReq(map[string]any{"code": code}); c.stdout != string(out) {
		t.Errorf("the runner's streams show\n%s\npython3's\n%s", c.stdout, out)
	}
}
