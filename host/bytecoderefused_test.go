package host

import (
	"testing"

	"github.com/evalhost/evalhost/backend"
)

// TestBytecodeRefused: Start goes on from runner.py when python could not
// run the bytecode it was given: it refused it (another magic number, a
// payload that is no code object: python says "Bad code object" for every
// marshal error), or the file went between BootFor's check and python's
// open (a concurrent start's Refused, a user clearing __pycache__ dirs).
// Not for a start that failed otherwise, whatever its stderr says of
// marshal data (a stdlib .pyc gone bad): that retry ran the interpreter's
// site code (sitecustomize, .pth files) a second time to fail again.
func TestBytecodeRefused(t *testing.T) {
	const pyc = "/home/u/.evalhost/runner/runner-x/__pycache__/runner.0123456789abcdef.pyc"
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"another magic number", early(1, "RuntimeError: Bad magic number in .pyc file\n"), true},
		{"no code object", early(1, "RuntimeError: Bad code object in .pyc file\n"), true},
		{"gone before python opened it", early(2, "/usr/bin/python3: can't open file '"+pyc+"': [Errno 2] No such file or directory\n"), true},
		{"gone before python opened it again", early(1, "python: Can't reopen .pyc file\n"), true},
		{"another file not opened", early(2, "/usr/bin/python3: can't open file '/elsewhere/runner.py': [Errno 2] No such file or directory\n"), false},
		{"a stdlib .pyc gone bad", early(1, "Fatal Python error: init_import_site: Failed to import the site module\n"+
			"Traceback (most recent call last):\n  File \"<frozen site>\", line 1, in <module>\nValueError: bad marshal data (unknown type code)\n"), false},
		{"a sitecustomize that fails", early(3, "sitecustomize: cannot go on\n"), false},
		{"killed", &StartError{Err: &EarlyExitError{Death: &backend.DeathError{ExitCode: -1, Signal: "killed"}}}, false},
		{"a timeout", &StartError{Err: ErrStartTimeout}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bytecodeRefused(tc.err, pyc); got != tc.want {
				t.Errorf("bytecodeRefused = %v, want %v", got, tc.want)
			}
		})
	}
}

func early(code int, tail string) error {
	return &StartError{Err: &EarlyExitError{Python: "/usr/bin/python3", Death: &backend.DeathError{ExitCode: code, StderrTail: tail}},
		StderrTail: tail}
}
