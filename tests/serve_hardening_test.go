package tests

import (
	"os"
	"strings"
	"testing"
)

// TestServeHardening drives serve through the awkward cases a client hits:
// each case starts its own server and checks what the client is told.
func TestServeHardening(t *testing.T) {
	tests := []struct {
		name string
		args []string
		run  func(t *testing.T, c *serveClient)
	}{
		{
			// Once serve stops reading (shutdown, EOF) no tool_result can
			// arrive: a draining cell's pending call must fail with a clear
			// ToolError, not wait for the cell's timeout.
			name: "tool call pending at end of stdin fails at once",
			run: func(t *testing.T, c *serveClient) {
				code := "print('before', flush=True)\ntool.lookup(key='k')"
				c.send(map[string]any{"op": "eval", "id": "t1", "cells": []any{map[string]any{"code": code, "timeout": 600}}})
				c.waitFor("tool_call", func() bool { return len(toolCalls(c.byID["t1"])) == 1 })
				c.stdin.Close()
				lines := c.result("t1")
				cellEnd := ofType(lines, "cell_end")[0]
				out := cellEnd["output"].(map[string]any)["text"].(string)
				if cellEnd["status"] != "error" || !strings.Contains(out, "before") || !strings.Contains(out, "ToolError: evalhost serve stopped reading requests") {
					t.Fatalf("cell_end = %v", cellEnd)
				}
			},
		},
		{
			// close used to stop the session's interpreters on the reader
			// goroutine: while a busy one took its grace window to stop,
			// serve read nothing, not even a ping or a cancel of another
			// session. Here the cell holds out (signals ignored) until the
			// test releases it, so the pong must come first.
			name: "close of a busy session does not stall other requests",
			args: []string{"--grace", "10m"},
			run: func(t *testing.T, c *serveClient) {
				flag := t.TempDir() + "/release"
				hold := "import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('holding', flush=True)\nwhile not os.path.exists(" + strconvQuote(flag) + "): time.sleep(0.05)"
				c.send(map[string]any{"op": "eval", "id": "busy", "session": "B", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
				c.send(map[string]any{"op": "eval", "id": "queued", "session": "B", "cells": []any{py("print('never')")}})
				c.waitFor("busy holding", func() bool { return strings.Contains(stdoutOf(c.byID["busy"]), "holding") })
				c.send(map[string]any{"op": "close", "id": "cl", "session": "B"})
				c.send(map[string]any{"op": "ping", "id": "p"})
				c.send(map[string]any{"op": "eval", "id": "fresh", "session": "B", "cells": []any{py("print('fresh')")}})
				c.waitFor("pong while the closed session stops", func() bool { return len(ofType(c.byID["p"], "pong")) == 1 })
				if out := stdoutOf(c.result("fresh")); out != "fresh\n" {
					t.Fatalf("request after close: %q", out)
				}
				if err := os.WriteFile(flag, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				c.result("busy")
				cellEnd := ofType(c.result("queued"), "cell_end")[0]
				if cellEnd["status"] != "cancelled" || !strings.Contains(cellEnd["message"].(string), "the session was closed") {
					t.Fatalf("request queued on the closed session: %v", cellEnd)
				}
			},
		},
		{
			// A reset that names the session but not the cwd it was opened
			// in used to match nothing and still answer "reset": the client
			// believed state it still had was gone.
			name: "reset without cwd restarts the session and says whether one existed",
			run: func(t *testing.T, c *serveClient) {
				dir := t.TempDir()
				c.send(map[string]any{"op": "eval", "id": "e1", "session": "R", "cwd": dir, "cells": []any{py("v = 1")}})
				c.result("e1")
				c.send(map[string]any{"op": "reset", "id": "r1", "session": "R"})
				c.send(map[string]any{"op": "reset", "id": "r2", "session": "nobody"})
				for id, want := range map[string]bool{"r1": true, "r2": false} {
					c.waitFor(id+" reply", func() bool { return len(ofType(c.byID[id], "reset")) == 1 })
					c.mu.Lock()
					reply := ofType(c.byID[id], "reset")[0]
					c.mu.Unlock()
					if reply["existed"] != want {
						t.Errorf("%s: %v; want existed %v", id, reply, want)
					}
				}
				c.send(map[string]any{"op": "eval", "id": "e2", "session": "R", "cwd": dir, "cells": []any{py("print('v' in globals())")}})
				if out := stdoutOf(c.result("e2")); out != "False\n" {
					t.Fatalf("state after reset: %q, want False", out)
				}
			},
		},
		{
			// An over-long line cannot be parsed, but its id usually sits in
			// the prefix read: the refusal must carry it, or a client waits
			// forever for that request's end.
			name: "over-long request line is refused with its id",
			args: []string{"--max-line", "100"},
			run: func(t *testing.T, c *serveClient) {
				c.sendRaw(`{"op":"eval","id":"long","cells":[{"code":"s = '` + strings.Repeat("x", 500) + `'"}]}`)
				refusal := ofType(c.result("long"), "request_error")
				if len(refusal) != 1 || refusal[0]["op"] != "eval" || !strings.Contains(refusal[0]["error"].(string), "--max-line (100 bytes)") {
					t.Fatalf("replies to an over-long line: %v", c.result("long"))
				}
				c.send(map[string]any{"op": "eval", "id": "short", "cells": []any{py("print(2)")}})
				if out := stdoutOf(c.result("short")); out != "2\n" {
					t.Fatalf("request after an over-long line: %q", out)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, startServe(t, tt.args...))
		})
	}
}
