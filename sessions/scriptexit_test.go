package sessions

import (
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A cell's script exit (CellResult.ScriptExit) is python3's: sys.exit(N),
// and 130 for a KeyboardInterrupt the cell raised (python3 dies of SIGINT),
// not for one it caught or turned into another error, nor for a class of
// that name (python3 exits 1 by it, as by any error); for a subclass as
// python3 itself: 1 before 3.14, SIGINT's 130 from 3.14 (its exit matches
// KeyboardInterrupt by isinstance). The registry runs testkit.Python, the
// interpreter whose version the expectation reads.
func TestScriptExit(t *testing.T) {
	r := newTestRegistry(t, Config{Python: testkit.Python(t)})
	subExit, subExited := 0, false
	if testkit.PythonAtLeast(t, 3, 14) {
		subExit, subExited = 130, true
	}
	cases := []struct {
		name   string
		code   string
		status Status
		exit   int
		exited bool
	}{
		{"sys.exit(3)", "import sys; sys.exit(3)", StatusError, 3, true},
		{"an error", "1/0", StatusError, 0, false},
		{"KeyboardInterrupt raised", "raise KeyboardInterrupt", StatusError, 130, true},
		{"KeyboardInterrupt in a function", "def f():\n    raise KeyboardInterrupt('stop')\nf()", StatusError, 130, true},
		{"KeyboardInterrupt caught", "try:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    pass", StatusOK, 0, false},
		{"KeyboardInterrupt turned into another", "try:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    raise ValueError('x')", StatusError, 0, false},
		{"a class named KeyboardInterrupt", "class KeyboardInterrupt(Exception): pass\nraise KeyboardInterrupt", StatusError, 0, false},
		{"a KeyboardInterrupt subclass", "class Stop(KeyboardInterrupt): pass\nraise Stop", StatusError, subExit, subExited},
		// A SIGINT the cell sends itself is no interrupt of the caller's:
		// it was reported cancelled ("the call was cancelled").
		{"a SIGINT the cell sent itself", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time; time.sleep(5)", StatusError, 130, true},
		{"a SIGINT the cell sent itself, caught", "import os, signal, time\ntry:\n    os.kill(os.getpid(), signal.SIGINT); time.sleep(5)\nexcept KeyboardInterrupt:\n    pass", StatusOK, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := eval(t, r, Request{Session: "exit", Cwd: t.TempDir(), Batch: true, Cells: []Cell{py(c.code)}})
			cr := res.Cells[0]
			status, exited := cr.ScriptExit()
			if cr.Status != c.status || status != c.exit || exited != c.exited {
				t.Fatalf("status %s, script exit (%d, %v); want %s, (%d, %v); output %q", cr.Status, status, exited, c.status, c.exit, c.exited, cr.Output.Text)
			}
		})
	}
}

// In a script's batch (Argv) a raised KeyboardInterrupt ends the script,
// as sys.exit() does, KeepGoing or not: python3 dies of it, as of Ctrl-C,
// so no later cell runs. Any other error, a class named
// KeyboardInterrupt's too, lets KeepGoing run the rest, and so does a
// notebook's (no Argv) KeyboardInterrupt, as Jupyter's allow_errors does.
func TestBatchKeyboardInterruptStops(t *testing.T) {
	r := newTestRegistry(t, Config{})
	for _, c := range []struct {
		name, code string
		argv       []string
		after      Status
	}{
		{"raised", "raise KeyboardInterrupt", []string{"-c"}, StatusSkipped},
		{"in a function", "def f():\n    raise KeyboardInterrupt\nf()", []string{"s.py"}, StatusSkipped},
		{"a class of the name", "class KeyboardInterrupt(Exception): pass\nraise KeyboardInterrupt", []string{"-c"}, StatusOK},
		{"another error", "1/0", []string{"-c"}, StatusOK},
		{"a notebook's", "raise KeyboardInterrupt", nil, StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := eval(t, r, Request{Session: "ki", Cwd: t.TempDir(), Mode: ModePerCall, Batch: true, KeepGoing: true,
				Argv: c.argv, Cells: []Cell{py(c.code), py("print('after')")}})
			if res.Cells[0].Status != StatusError || res.Cells[1].Status != c.after || res.FailedCell != 0 {
				t.Fatalf("cells %s, %s (%q), failed cell %d; want error, %s, 0", res.Cells[0].Status, res.Cells[1].Status, res.Cells[1].Message, res.FailedCell, c.after)
			}
		})
	}
}
