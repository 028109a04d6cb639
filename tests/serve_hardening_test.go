package tests

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, startServe(t, tt.args...))
		})
	}
}
