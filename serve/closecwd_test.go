package serve_test

import (
	"context"
	"testing"

	"github.com/evalhost/evalhost/serve"
)

// close with a cwd closes the session of that name in that directory
// alone; the same name in another directory keeps its state.
func TestCloseInOneCwd(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{})
	a, b := t.TempDir(), t.TempDir()
	for i, d := range []string{a, b} {
		id := []string{"sa", "sb"}[i]
		c.send(map[string]any{"op": "eval", "id": id, "session": "S", "cwd": d, "cells": []any{py("x = 1")}})
		if end := c.reply("end", id); end["status"] != "ok" {
			t.Fatalf("x = 1 in %s: %v", d, end)
		}
	}
	c.send(map[string]any{"op": "close", "id": "cl", "session": "S", "cwd": a})
	if closed := c.reply("closed", "cl"); closed["existed"] != true {
		t.Fatalf("closed = %v", closed)
	}
	for _, tt := range []struct{ id, cwd, want string }{{"ra", a, "False\n"}, {"rb", b, "True\n"}} {
		c.send(map[string]any{"op": "eval", "id": tt.id, "session": "S", "cwd": tt.cwd, "cells": []any{py("print('x' in globals())")}})
		if c.reply("end", tt.id); stdout(c.of(tt.id)) != tt.want {
			t.Errorf("session S in %s after the close of %s's: %q, want %q", tt.cwd, a, stdout(c.of(tt.id)), tt.want)
		}
	}
	c.send(map[string]any{"op": "shutdown"})
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
}
