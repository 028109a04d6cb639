package serve_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/evalhost/evalhost/serve"
)

// Evals run on the goroutine that read them, which hands the reading on to
// a goroutine parked after an earlier request. Whatever goroutine reads, a
// ping behind running evals is answered while they run, one session's
// requests run in line order, and no goroutine outlives Serve (startServer
// checks for leaks).
func TestServeReadingHandedOn(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{})
	// Park a few goroutines: sequential evals each end before the next line.
	for i := range 3 {
		id := fmt.Sprintf("warm%d", i)
		c.send(map[string]any{"op": "eval", "id": id, "session": "A", "cells": []any{py(fmt.Sprintf("n = %d", i))}})
		c.reply("end", id)
	}
	// Hold three sessions busy at once, so the parked goroutines and new
	// ones all run requests while another reads.
	flag := t.TempDir() + "/release"
	hold := "import os, time\nprint('holding', flush=True)\nwhile not os.path.exists(" + strconv.Quote(flag) + "): time.sleep(0.02)"
	for _, s := range []string{"A", "B", "C"} {
		c.send(map[string]any{"op": "eval", "id": "hold" + s, "session": s, "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
	}
	for _, s := range []string{"A", "B", "C"} {
		c.reply("stdout", "hold"+s)
	}
	// Queued behind holdA: runs after it, in line order.
	c.send(map[string]any{"op": "eval", "id": "after1", "session": "A", "cells": []any{py("n += 10")}})
	c.send(map[string]any{"op": "eval", "id": "after2", "session": "A", "cells": []any{py("print(n)")}})
	c.send(map[string]any{"op": "ping", "id": "p"})
	c.reply("pong", "p") // read and answered while four requests wait or run
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"holdA", "holdB", "holdC", "after1", "after2"} {
		if end := c.reply("end", id); end["status"] != "ok" {
			t.Fatalf("%s ended %v", id, end)
		}
	}
	if got := stdout(c.of("after2")); got != "12\n" {
		t.Fatalf("after2 printed %q, want 12 (after1 ran first)", got)
	}
	c.send(map[string]any{"op": "shutdown"})
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
}
