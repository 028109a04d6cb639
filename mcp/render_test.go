package mcp

import (
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// A skipped cell says why: its own message when it has one (a batch that
// stopped at sys.exit() or a death, whose failed cell is not the reason),
// else the failed cell before it.
func TestStatusLineOfASkippedCell(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cell   sessions.CellResult
		failed int
		want   string
	}{
		{"after a failure", sessions.CellResult{Index: 2, Language: "py", Status: sessions.StatusSkipped}, 1,
			"[cell 3/3 (py) skipped: not run because cell 2 was not ok]"},
		{"after sys.exit()", sessions.CellResult{Index: 2, Language: "py", Status: sessions.StatusSkipped,
			Message: "not run: cell 2 ended the script with sys.exit()"}, -1,
			"[cell 3/3 (py) skipped: not run: cell 2 ended the script with sys.exit()]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusLine(tc.cell, 3, tc.failed); got != tc.want {
				t.Errorf("statusLine = %q, want %q", got, tc.want)
			}
		})
	}
}
