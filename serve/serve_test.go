package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// client drives one Server through pipes, as a Go program embedding serve
// would, with the real runner behind it.
type client struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan map[string]any
	served chan struct{} // closed when Serve returned err
	err    error
	seen   []map[string]any // every line read so far
}

func startServer(t *testing.T, ctx context.Context, cfg serve.Config) *client {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	if cfg.Sessions.Home == "" {
		cfg.Sessions.Home = t.TempDir()
	}
	// A failed test may leave a cell holding out: end the work at once
	// then, instead of draining it.
	ctx, abort := context.WithCancel(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, lines: make(chan map[string]any, 1024), served: make(chan struct{})}
	srv := serve.New(cfg)
	go func() {
		c.err = srv.Serve(ctx, inR, outW)
		outW.Close()
		inR.Close() // ends the reader Serve may have left in Read
		close(c.served)
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"type": "UNPARSEABLE", "raw": sc.Text()}
			}
			c.lines <- m
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			abort()
		}
		inW.Close()
		for range c.lines {
		}
		<-c.served
		abort()
	})
	return c
}

// wait returns what Serve returned, once it has; its output is read on.
func (c *client) wait() error {
	for m := range c.lines {
		c.seen = append(c.seen, m)
	}
	<-c.served
	return c.err
}

func (c *client) send(req map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(req)
	c.sendRaw(string(b))
}

func (c *client) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("send %s: %v", line, err)
	}
}

// until returns the first line, read already or next, that satisfies match;
// the lines read stay in c.seen. A hang is the watchdog's to report.
func (c *client) until(what string, match func(m map[string]any) bool) map[string]any {
	c.t.Helper()
	for _, m := range c.seen {
		if match(m) {
			return m
		}
	}
	for m := range c.lines {
		c.seen = append(c.seen, m)
		if match(m) {
			return m
		}
	}
	c.t.Fatalf("output ended before %s; read: %v", what, c.seen)
	return nil
}

func (c *client) reply(typ, id string) map[string]any {
	c.t.Helper()
	return c.until(typ+" of "+id, func(m map[string]any) bool { return m["type"] == typ && m["id"] == id })
}

// of returns the lines read so far for request id.
func (c *client) of(id string) []map[string]any {
	var out []map[string]any
	for _, m := range c.seen {
		if m["id"] == id {
			out = append(out, m)
		}
	}
	return out
}

func stdout(lines []map[string]any) string {
	var s strings.Builder
	for _, m := range lines {
		if m["type"] == "stdout" {
			s.WriteString(m["data"].(string))
		}
	}
	return s.String()
}

func py(code string) map[string]any { return map[string]any{"language": "py", "code": code} }

// TestServeSession drives a whole session through the library alone: two
// cells sharing state, a tool call answered by the client, a cancel that
// keeps the session's state, a ping answered while a cell runs, a close
// that starts the session afresh, and a shutdown.
func TestServeSession(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{Version: "test", Sessions: sessions.Config{Grace: 5 * time.Second}})
	hello := c.until("hello", func(m map[string]any) bool { return m["type"] == "hello" })
	if hello["protocol"] != serve.Protocol || hello["version"] != "test" {
		t.Fatalf("hello = %v", hello)
	}

	c.send(map[string]any{"op": "eval", "id": "e1", "session": "S", "cells": []any{py("x = 40"), py("x += 2\nprint(x)")}})
	end := c.reply("end", "e1")
	lines := c.of("e1")
	if end["status"] != "ok" || end["failedCell"] != float64(-1) || stdout(lines) != "42\n" {
		t.Fatalf("e1 ended %v with stdout %q", end, stdout(lines))
	}
	var cellEnds []any
	for _, m := range lines {
		if m["type"] == "cell_end" {
			cellEnds = append(cellEnds, m["cell"])
		}
	}
	if len(cellEnds) != 2 || cellEnds[0] != float64(0) || cellEnds[1] != float64(1) {
		t.Errorf("cell_end lines for cells %v, want 0 and 1", cellEnds)
	}

	c.send(map[string]any{"op": "eval", "id": "t1", "session": "S", "cells": []any{py("print(tool.lookup(key='k'))")}})
	call := c.reply("tool_call", "t1")
	if call["name"] != "lookup" || call["cell"] != float64(0) || call["session"] != "S" || call["args"].(map[string]any)["key"] != "k" {
		t.Fatalf("tool_call = %v", call)
	}
	c.send(map[string]any{"op": "tool_result", "call": call["call"], "ok": true, "value": "v"})
	if end := c.reply("end", "t1"); end["status"] != "ok" || stdout(c.of("t1")) != "v\n" {
		t.Fatalf("t1 ended %v with stdout %q", end, stdout(c.of("t1")))
	}

	c.send(map[string]any{"op": "eval", "id": "c1", "session": "S", "cells": []any{map[string]any{"code": "import time\nprint('go', flush=True)\ntime.sleep(600)", "timeout": 600}}})
	c.until("c1 running", func(m map[string]any) bool { return m["id"] == "c1" && m["type"] == "stdout" })
	c.send(map[string]any{"op": "ping", "id": "p"})
	c.reply("pong", "p") // preempted: answered while c1 runs
	c.send(map[string]any{"op": "cancel", "id": "c1"})
	if end := c.reply("end", "c1"); end["status"] != "cancelled" {
		t.Fatalf("cancelled c1 ended %v", end)
	}
	c.send(map[string]any{"op": "eval", "id": "c2", "session": "S", "cells": []any{py("print(x)")}})
	if c.reply("end", "c2"); stdout(c.of("c2")) != "42\n" {
		t.Fatalf("state after a cancel: %q, want 42", stdout(c.of("c2")))
	}

	c.send(map[string]any{"op": "close", "id": "cl", "session": "S"})
	if closed := c.reply("closed", "cl"); closed["existed"] != true || closed["session"] != "S" {
		t.Fatalf("closed = %v", closed)
	}
	c.send(map[string]any{"op": "eval", "id": "f1", "session": "S", "cells": []any{py("print('x' in globals())")}})
	if c.reply("end", "f1"); stdout(c.of("f1")) != "False\n" {
		t.Fatalf("a closed session kept its state: %q", stdout(c.of("f1")))
	}

	for _, m := range c.seen {
		if id, ok := m["id"].(string); ok && strings.Contains(id, "-") {
			t.Errorf("an interpreter's run id reached the client: %v", m)
		}
	}
	c.send(map[string]any{"op": "shutdown"})
	if err := c.wait(); err != nil {
		t.Fatalf("Serve after shutdown: %v", err)
	}
}

// The end of Serve's context ends the work at once: a cell that ignores
// interrupts is killed without its grace, and still gets its end.
func TestServeContextEndsWorkAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop now")
	c := startServer(t, ctx, serve.Config{Sessions: sessions.Config{Grace: 10 * time.Minute}})
	hold := "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\ntime.sleep(600)"
	c.send(map[string]any{"op": "eval", "id": "h", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
	c.until("h running", func(m map[string]any) bool { return m["id"] == "h" && m["type"] == "stdout" })
	cancel(stop)
	if end := c.reply("end", "h"); end["status"] != "cancelled" {
		t.Fatalf("h ended %v", end)
	}
	if err := c.wait(); err != stop {
		t.Fatalf("Serve returned %v, want the context's cause", err)
	}
}

func TestServeTwice(t *testing.T) {
	srv := serve.New(serve.Config{})
	srv.Shutdown() // before Serve: it stops at once
	var out strings.Builder
	if err := srv.Serve(context.Background(), strings.NewReader(""), &out); err != nil {
		t.Fatalf("first Serve: %v", err)
	}
	if !strings.Contains(out.String(), `"type":"hello"`) {
		t.Errorf("no hello: %q", out.String())
	}
	if err := srv.Serve(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, serve.ErrServed) {
		t.Fatalf("second Serve: %v, want ErrServed", err)
	}
}
