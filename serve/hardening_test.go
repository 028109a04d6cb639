package serve_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// TestServeHardening drives a Server through the awkward cases a client
// hits: each case starts its own and checks what the client is told.
func TestServeHardening(t *testing.T) {
	tests := []struct {
		name string
		cfg  serve.Config
		run  func(t *testing.T, c *client)
	}{
		{
			// Once serve stops reading (shutdown, end of input) no
			// tool_result can arrive: a draining cell's pending call must
			// fail with a clear ToolError, not wait for the cell's timeout.
			name: "tool call pending at end of input fails at once",
			run: func(t *testing.T, c *client) {
				code := "print('before', flush=True)\ntool.lookup(key='k')"
				c.send(map[string]any{"op": "eval", "id": "t1", "cells": []any{map[string]any{"code": code, "timeout": 600}}})
				c.reply("tool_call", "t1")
				c.in.Close()
				c.reply("end", "t1")
				cellEnd := c.reply("cell_end", "t1")
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
			cfg:  serve.Config{Sessions: sessions.Config{Grace: 10 * time.Minute}},
			run: func(t *testing.T, c *client) {
				flag := t.TempDir() + "/release"
				hold := "import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('holding', flush=True)\nwhile not os.path.exists(" + strconv.Quote(flag) + "): time.sleep(0.05)"
				c.send(map[string]any{"op": "eval", "id": "busy", "session": "B", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
				c.send(map[string]any{"op": "eval", "id": "queued", "session": "B", "cells": []any{py("print('never')")}})
				c.reply("stdout", "busy")
				c.send(map[string]any{"op": "close", "id": "cl", "session": "B"})
				c.send(map[string]any{"op": "ping", "id": "p"})
				c.send(map[string]any{"op": "eval", "id": "fresh", "session": "B", "cells": []any{py("print('fresh')")}})
				c.reply("pong", "p")
				if c.reply("end", "fresh"); stdout(c.of("fresh")) != "fresh\n" {
					t.Fatalf("request after close: %q", stdout(c.of("fresh")))
				}
				if err := os.WriteFile(flag, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				c.reply("end", "busy")
				cellEnd := c.reply("cell_end", "queued")
				if cellEnd["status"] != "cancelled" || !strings.Contains(cellEnd["message"].(string), "the session was closed") {
					t.Fatalf("request queued on the closed session: %v", cellEnd)
				}
			},
		},
		{
			// 16 first requests at once, default --max-sessions 4: each
			// new session used to be evicted the moment it was created, and
			// 12 requests got request_error "the session was closed". The
			// limit evicts idle sessions only; it is exceeded while more
			// are busy and comes back as their requests end.
			name: "more busy sessions than --max-sessions all run",
			run: func(t *testing.T, c *client) {
				const n = 16
				flag := t.TempDir() + "/release"
				hold := "import os, time\nprint('holding', flush=True)\nwhile not os.path.exists(" + strconv.Quote(flag) + "): time.sleep(0.02)\nprint('released')"
				for i := range n {
					id := fmt.Sprintf("m%02d", i)
					c.send(map[string]any{"op": "eval", "id": id, "session": id, "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
				}
				// Every session prints "holding" before any is released, so
				// all 16 are busy at once; a refusal or an end stops the wait.
				holding := map[any]bool{}
				c.until("every session holding, or a request ended", func(m map[string]any) bool {
					switch m["type"] {
					case "end", "request_error":
						return true
					case "stdout":
						holding[m["id"]] = true
					}
					return len(holding) == n
				})
				if err := os.WriteFile(flag, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					id := fmt.Sprintf("m%02d", i)
					end := c.until("end or refusal of "+id, func(m map[string]any) bool {
						return m["id"] == id && (m["type"] == "end" || m["type"] == "request_error")
					})
					if end["type"] == "request_error" {
						t.Errorf("%s refused: %v", id, end["error"])
					} else if end["status"] != "ok" || stdout(c.of(id)) != "holding\nreleased\n" {
						t.Errorf("%s: %v, stdout %q", id, end, stdout(c.of(id)))
					}
				}
				c.send(map[string]any{"op": "sessions", "id": "list"})
				if live := c.reply("sessions", "list")["sessions"].([]any); len(live) != 4 {
					t.Errorf("%d sessions live after every request ended, want --max-sessions, 4", len(live))
				}
			},
		},
		{
			// A reset that names the session but not the cwd it was opened
			// in used to match nothing and still answer "reset": the client
			// believed state it still had was gone.
			name: "reset without cwd restarts the session and says whether one existed",
			run: func(t *testing.T, c *client) {
				dir := t.TempDir()
				c.send(map[string]any{"op": "eval", "id": "e1", "session": "R", "cwd": dir, "cells": []any{py("v = 1")}})
				c.reply("end", "e1")
				c.send(map[string]any{"op": "reset", "id": "r1", "session": "R"})
				c.send(map[string]any{"op": "reset", "id": "r2", "session": "nobody"})
				for id, want := range map[string]bool{"r1": true, "r2": false} {
					if reply := c.reply("reset", id); reply["existed"] != want {
						t.Errorf("%s: %v; want existed %v", id, reply, want)
					}
				}
				c.send(map[string]any{"op": "eval", "id": "e2", "session": "R", "cwd": dir, "cells": []any{py("print('v' in globals())")}})
				if c.reply("end", "e2"); stdout(c.of("e2")) != "False\n" {
					t.Fatalf("state after reset: %q, want False", stdout(c.of("e2")))
				}
			},
		},
		{
			// An over-long line cannot be parsed, but its id and op usually
			// sit in the prefix read: the refusal must carry them, or a
			// client waits forever for that request's end.
			name: "over-long request line is refused with its id and op",
			cfg:  serve.Config{MaxLine: 100},
			run: func(t *testing.T, c *client) {
				c.sendRaw(`{"op":"eval","id":"long","cells":[{"code":"s = '` + strings.Repeat("x", 500) + `'"}]}`)
				refusal := c.reply("request_error", "long")
				if refusal["op"] != "eval" || !strings.Contains(refusal["error"].(string), "--max-line (100 bytes)") {
					t.Fatalf("refusal of an over-long line: %v", refusal)
				}
				c.send(map[string]any{"op": "eval", "id": "short", "cells": []any{py("print(2)")}})
				if c.reply("end", "short"); stdout(c.of("short")) != "2\n" {
					t.Fatalf("request after an over-long line: %q", stdout(c.of("short")))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, startServer(t, context.Background(), tt.cfg))
		})
	}
}
