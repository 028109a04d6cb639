package tests

import (
	"fmt"
	"regexp"
	"testing"
)

// Whether a cell's uncaught error is reported as python3's (its script's
// sys.excepthook called, the frame marked reported) is its request's to
// say, by argv: a session a script's request used reports a later
// notebook request's error as a fresh notebook session does, and a
// script's request after that is a script's again, in every cell.
func TestServeExcepthookPerRequest(t *testing.T) {
	c := startServe(t)
	const hook = "import sys\nsys.excepthook = lambda t, v, tb: print('HOOK', t.__name__)\n"
	const notebookCell = hook + "def f():\n    1/0\nf()\n"
	n := 0
	eval := func(session string, argv []string, cells ...string) []map[string]any {
		n++
		id := fmt.Sprintf("r%d", n)
		req := map[string]any{"op": "eval", "id": id, "session": session}
		if argv != nil {
			req["argv"] = argv
		}
		var list []map[string]any
		for _, code := range cells {
			list = append(list, py(code))
		}
		req["cells"] = list
		c.send(req)
		return c.result(id)
	}
	// what a notebook's session says for the cell: the error, every frame
	fresh := eval("fresh", nil, notebookCell)
	wantErr := ofType(fresh, "error")
	if len(wantErr) != 1 || wantErr[0]["reported"] != nil || stdoutOf(fresh) != "" {
		t.Fatalf("a fresh notebook session: errors %v, stdout %q; want one unreported, nothing printed", wantErr, stdoutOf(fresh))
	}
	cellNumber := regexp.MustCompile(`<cell \d+>`)
	traceback := func(e map[string]any) string {
		return cellNumber.ReplaceAllString(fmt.Sprint(e["traceback"]), "<cell N>")
	}
	asNotebook := func(t *testing.T, lines []map[string]any) {
		t.Helper()
		errs := ofType(lines, "error")
		if stdoutOf(lines) != "" || len(errs) != 1 || traceback(errs[0]) != traceback(wantErr[0]) || errs[0]["reported"] != nil {
			t.Errorf("stdout %q, errors %v; want a notebook's: nothing printed, %v", stdoutOf(lines), errs, wantErr)
		}
	}
	asScript := func(t *testing.T, lines []map[string]any) {
		t.Helper()
		errs := ofType(lines, "error")
		if stdoutOf(lines) != "HOOK ZeroDivisionError\n" || len(errs) != 1 || errs[0]["reported"] != true {
			t.Errorf("stdout %q, errors %v; want the hook's line and a reported error", stdoutOf(lines), errs)
		}
	}
	for _, tc := range []struct {
		name  string
		argv  []string
		cells []string
		check func(*testing.T, []map[string]any)
	}{
		{"a script's request", []string{"-c"}, []string{hook + "1/0"}, asScript},
		{"a notebook's request in the same session", nil, []string{notebookCell}, asNotebook},
		{"a script's later cell, which carries no argv", []string{"s.py"}, []string{"x = 1", "1/0"}, asScript},
		{"a notebook's again", nil, []string{notebookCell}, asNotebook},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, eval("shared", tc.argv, tc.cells...)) })
	}
}
