package sessions

import "testing"

// A cell's script exit (CellResult.ScriptExit) is python3's: sys.exit(N),
// and 130 for a KeyboardInterrupt the cell raised (python3 dies of SIGINT),
// not for one it caught or turned into another error.
func TestScriptExit(t *testing.T) {
	r := newTestRegistry(t, Config{})
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
