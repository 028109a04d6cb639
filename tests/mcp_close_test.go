//go:build linux || darwin

package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// How a client ends `evalhost mcp` on stdio decides its exit: one that
// read every answer and then closed stdout, with stdin or without, in
// either order, ends it normally (exit 0, nothing on stderr): nothing
// was lost. Before, the server cancelled its context whenever it saw its
// stdout closed, and exited 141 saying it "cancelled the calls in flight"
// though none was (every time with stdin left open, most times when stdin
// was closed first). A client that closes both ends while its call runs
// still gets 141 and the line saying what was cancelled. The mcp
// package's own stdio_client (closes stdin, waits for the exit, then
// closes stdout) ends it normally too. The cases that raced repeat.
func TestMCPClientClose(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "mcp, anyio", "mcp")
	for _, tc := range []struct {
		name string
		how  string // mcp_close_client.py's HOW
		runs int
		code int
		said string // on stderr; "" for nothing at all
	}{
		{"every answer read, stdin then stdout closed", "in,out", 6, 0, ""},
		{"every answer read, stdout then stdin closed", "out,in", 6, 0, ""},
		{"every answer read, stdout closed, stdin open", "out", 2, 0, ""},
		{"the mcp package's stdio_client", "sdk", 1, 0, ""},
		{"a call unanswered, both closed", "unanswered", 2, 141,
			"evalhost mcp: stdout was closed: the client stopped reading its end; cancelled the calls in flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "python3", "testdata/mcp_close_client.py", binary, tc.how, strconv.Itoa(tc.runs), t.TempDir())
			cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("mcp_close_client.py: %v\n%s%s", err, out, stderrOf(err))
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != tc.runs {
				t.Fatalf("%d runs reported, want %d:\n%s", len(lines), tc.runs, out)
			}
			for i, line := range lines {
				var run struct {
					Code   int
					Stderr string
				}
				if err := json.Unmarshal([]byte(line), &run); err != nil {
					t.Fatalf("run %d: %v: %s", i, err, line)
				}
				if run.Code != tc.code {
					t.Errorf("run %d: mcp exited %d, want %d; stderr:\n%s", i, run.Code, tc.code, run.Stderr)
				}
				if tc.said == "" && run.Stderr != "" || !strings.Contains(run.Stderr, tc.said) {
					t.Errorf("run %d: stderr %q, want %q", i, run.Stderr, tc.said)
				}
			}
		})
	}
}
