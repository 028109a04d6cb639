//go:build linux || darwin

package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// How a client ends `evalhost mcp` or `evalhost serve` on stdio decides
// its exit: one that read every answer and then closed stdout, with stdin
// or without, in either order, ends it normally (exit 0, nothing on
// stderr): nothing was lost. Before, both cancelled their work whenever
// they saw stdout closed, and exited 141 saying they cancelled or ended
// the requests in flight though none was (every time with stdin left open,
// most times otherwise). A client that closes both ends while its eval
// runs still gets 141 and the line saying what was cancelled. The mcp
// package's own stdio_client (closes stdin, waits for the exit, then
// closes stdout) ends mcp normally too, and so does a client that
// cancelled its call (notifications/cancelled: MCP's client wants no
// answer then) and closed both ends before it came, and one that left
// with the server's own answer (a line that was not JSON) in the pipe,
// unread: it was written. The cases that raced repeat.
func TestClientClose(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "mcp, anyio", "mcp")
	for _, server := range []string{"mcp", "serve"} {
		for _, tc := range []struct {
			name string
			how  string // close_client.py's HOW
			runs int
			code int
			said string // on stderr, after "evalhost SERVER: "; "" for nothing at all
		}{
			{"every answer read, stdin then stdout closed", "in,out", 6, 0, ""},
			{"every answer read, stdout then stdin closed", "out,in", 6, 0, ""},
			{"every answer read, stdout closed, stdin open", "out", 2, 0, ""},
			{"the mcp package's stdio_client", "sdk", 1, 0, ""},
			{"a call unanswered, both closed", "unanswered", 2, 141, "stdout was closed: the client stopped reading its end; "},
			{"a call cancelled, both closed", "cancelled", 2, 0, ""},
			// Sent and not read: unanswered whether the server read it
			// before it saw stdout closed or not (it exited 0 or 141 by
			// which it saw first).
			{"a call sent, both closed at once", "sent", 10, 141, "stdout was closed: the client stopped reading its end; "},
			{"a call sent, stdout closed, stdin open", "sent,open", 10, 141, "stdout was closed: the client stopped reading its end; "},
			// The server's own answer (to a line that is not JSON) written
			// and unread when the client leaves: written, so nothing was
			// lost, in every order of the closes (mcp logs the line).
			{"its own answer written, unread, stdout then stdin closed", "own,out,in", 4, 0, ""},
			{"its own answer written, unread, stdin then stdout closed", "own,in,out", 4, 0, ""},
			{"its own answer written, unread, stdout closed, stdin open", "own,out", 4, 0, ""},
		} {
			if (tc.how == "sdk" || tc.how == "cancelled") && server != "mcp" {
				continue
			}
			t.Run(server+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "python3", "testdata/close_client.py", binary, server, tc.how, strconv.Itoa(tc.runs), t.TempDir())
				cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("close_client.py: %v\n%s%s", err, out, stderrOf(err))
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				if len(lines) != tc.runs {
					t.Fatalf("%d runs reported, want %d:\n%s", len(lines), tc.runs, out)
				}
				said := ""
				if tc.said != "" {
					said = "evalhost " + server + ": " + tc.said
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
						t.Errorf("run %d: %s exited %d, want %d; stderr:\n%s", i, server, run.Code, tc.code, run.Stderr)
					}
					if strings.HasPrefix(tc.how, "own") {
						run.Stderr = notJSONLogged.ReplaceAllString(run.Stderr, "")
					}
					if said == "" && run.Stderr != "" || !strings.Contains(run.Stderr, said) {
						t.Errorf("run %d: stderr %q, want %q", i, run.Stderr, said)
					}
				}
			})
		}
	}
}

// notJSONLogged is mcp's log line of a request line that is not JSON.
var notJSONLogged = regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="request line is not a JSON-RPC message" bytes=\d+\n`)
