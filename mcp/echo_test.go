package mcp

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An argument a result echoes (a title in the status line and in
// structuredContent, a session, path or job id in an error) is bounded by
// the tool's schema: a 2 MB one came back in a result past the 16 MiB at
// which the Go SDK's client drops the connection ("client is closing"),
// and every later call failed with it. Each call here is refused, naming
// the field and its bound, and the connection serves the next. The title
// is the 2 MB of that report; the other fields' 64 KiB, past every bound,
// would come back over the 4 KiB an error may take were the field echoed
// whole (2 MB each cost ~15 s of CPU under -race to encode and decode).
func TestEchoedArgumentsAreBounded(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	huge := strings.Repeat("\x01", 2<<20) // six bytes each in JSON, five in a %q echo
	long := huge[:64<<10]
	cell := func(extra map[string]any) []any {
		c := map[string]any{"code": "1"}
		for k, v := range extra {
			c[k] = v
		}
		return []any{c}
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"title", "eval", map[string]any{"cells": cell(map[string]any{"title": huge})}, "cells[0].title is 2097152 characters long; it may be at most"},
		{"language", "eval", map[string]any{"cells": cell(map[string]any{"language": long})}, "cells[0].language is 65536 characters long"},
		{"mode", "eval", map[string]any{"mode": long, "cells": cell(nil)}, `mode is "\x01\x01`},
		{"session of close", "close", map[string]any{"session": long}, "session is 65536 characters long"},
		{"session of reset", "reset", map[string]any{"session": long}, "session is 65536 characters long"},
		{"cwd", "eval", map[string]any{"cwd": long, "cells": cell(nil)}, "cwd is 65536 characters long"},
		{"notebook path", "notebook_insert", map[string]any{"path": long, "cell": 0, "source": "1"}, "path is 65536 characters long"},
		{"job", "wait", map[string]any{"job": long}, "job is 65536 characters long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t)
			session := goClientOverStdio(t, srv)
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			if got := textOf(res); !res.IsError || !strings.Contains(got, tc.want) || len(got) > 4096 {
				t.Fatalf("isError=%v, %d bytes: %.300q; want a short error containing %q", res.IsError, len(got), got, tc.want)
			}
			if _, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "sessions", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("the call after: %v", err)
			}
		})
	}
}
