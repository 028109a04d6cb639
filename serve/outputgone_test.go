package serve_test

import (
	"context"
	"errors"
	"testing"

	"github.com/evalhost/evalhost/serve"
)

// The reader of Serve's output leaving (Config.OutputGone) ends Serve: as
// at the end of its input, returning nil, when every answer was written,
// its input open or not; at once, returning ErrOutputGone, when an eval is
// unanswered, before or after its input ended. Before, evalhost serve
// cancelled Serve's context at any close of its stdout, and exited 141
// saying it ended the requests in flight though none was.
func TestServeOutputGone(t *testing.T) {
	hold := "print('go', flush=True)\nimport time\ntime.sleep(600)"
	for _, tc := range []struct {
		name     string
		code     string // the eval's cell
		answered bool   // its end is read before the reader goes
		inputEnd bool   // the input ends first
		want     error
	}{
		{"every answer written, input open", "1+1", true, false, nil},
		{"every answer written, input at its end", "1+1", true, true, nil},
		{"an eval unanswered, input open", hold, false, false, serve.ErrOutputGone},
		{"an eval unanswered, input at its end", hold, false, true, serve.ErrOutputGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone := make(chan struct{})
			c := startServer(t, context.Background(), serve.Config{OutputGone: gone})
			c.send(map[string]any{"op": "eval", "id": "e", "cells": []any{map[string]any{"code": tc.code, "timeout": 600}}})
			if tc.answered {
				c.reply("end", "e")
			} else {
				c.until("e running", func(m map[string]any) bool { return m["id"] == "e" && m["type"] == "stdout" })
			}
			if tc.inputEnd {
				c.in.Close()
			}
			close(gone)
			if err := c.wait(); !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("Serve returned %v, want %v", err, tc.want)
			}
		})
	}
}
