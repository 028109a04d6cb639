package runner

import (
	"strings"
	"testing"
)

// TestStdinRefusalHidesRunnerFrames: input(), getpass() and a withheld
// sys.stdin refuse from the runner's own code (stdio.py), whose frames
// no traceback shows, in either mode: the error ends at the cell's line,
// as the runner's own mode shows every error it raises for a cell.
func TestStdinRefusalHidesRunnerFrames(t *testing.T) {
	opts := func(*testing.T) startOpts {
		return startOpts{env: []string{"EVALHOST_STDIN=withheld", "EVALHOST_STDIN_WITHHELD=its stdin is a terminal"}}
	}
	inBothModesWith(t, opts, func(t *testing.T, p *proc) {
		for _, tc := range []struct{ name, code, line string }{
			{"input", "x = 1\ninput('name? ')", "input('name? ')"},
			{"getpass", "import getpass\ngetpass.getpass()", "getpass.getpass()"},
			{"stdin read", "import sys\nsys.stdin.read()", "sys.stdin.read()"},
			{"stdin readline", "import sys\nsys.stdin.readline()", "sys.stdin.readline()"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := wantError(t, p.run(tc.code), "StdinNotImplementedError")
				tb := strings.Join(e.Traceback, "\n")
				if strings.Contains(tb, "stdio.py") || strings.Contains(tb, "_refuse") || strings.Contains(tb, "deny_") {
					t.Errorf("traceback shows the runner's frames:\n%s", tb)
				}
				if !strings.Contains(tb, tc.line) {
					t.Errorf("traceback lacks the cell's line %q:\n%s", tc.line, tb)
				}
				if last := e.Traceback[len(e.Traceback)-1]; !strings.HasPrefix(last, "StdinNotImplementedError: ") {
					t.Errorf("last line %q", last)
				}
			})
		}
	})
}
