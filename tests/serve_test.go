package tests

import (
	"fmt"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	c := startServe(t, "--progress", "300ms", "--grace", "1s")
	dir := t.TempDir()

	// Two sessions at once: each sleep prints its wall-clock span.
	span := "import time; _a = time.time(); time.sleep(1); print(_a, time.time())"
	c.send(map[string]any{"op": "eval", "id": "a1", "session": "A", "cwd": dir, "cells": []any{py(span)}})
	c.send(map[string]any{"op": "eval", "id": "b1", "session": "B", "cwd": dir, "cells": []any{py(span)}})
	var spans [2][2]float64
	for i, id := range []string{"a1", "b1"} {
		lines := c.result(id)
		if end := endOf(t, lines); end["status"] != "ok" {
			t.Fatalf("%s ended %v", id, end)
		}
		fmt.Sscan(stdoutOf(lines), &spans[i][0], &spans[i][1])
	}
	if !(spans[0][0] < spans[1][1] && spans[1][0] < spans[0][1]) {
		t.Errorf("sessions A and B did not run in parallel: %v", spans)
	}
	if len(ofType(c.result("a1"), "progress")) == 0 {
		t.Errorf("no progress line during a 1 s cell with --progress 300ms")
	}

	// Malformed lines interleaved with valid requests: each gets a
	// request_error, the valid ones all complete.
	malformed := []string{
		`this is not json`,
		`[1,2,3]`,
		`{"id":"m3"}`,
		`{"op":"explode","id":"m4"}`,
		`{"op":"eval","cells":[{"code":"1"}]}`,
		`{"op":"eval","id":"m6"}`,
		`{"op":"eval","id":"m7","cells":"print(1)"}`,
		`{"op":"eval","id":"m8","cells":[{"language":"ruby","code":"1"}]}`,
		`{"op":"eval","id":"m9","cells":[{"code":42}]}`,
		`{"op":"eval","id":"m10","cells":[{"code":"1","timeout":"soon"}]}`,
		`{"op":"eval","id":"m11","cwd":"/no/such/dir","cells":[{"code":"1"}]}`,
		`{"op":"cancel","id":"never-sent"}`,
		`{"op":"eval","id":"m13","cells":[{"code":"1"}],"env":{"A":1}}`,
		`{"op":"eval","id":"m14","cells":[{"code":"1"}],"env":{"A B":"1"}}`,
	}
	for i, bad := range malformed {
		c.sendRaw(bad)
		c.send(map[string]any{"op": "eval", "id": fmt.Sprintf("ok%d", i), "session": "A", "cwd": dir, "cells": []any{py(fmt.Sprintf("print(%d * 2)", i))}})
	}
	for i := range malformed {
		lines := c.result(fmt.Sprintf("ok%d", i))
		if end := endOf(t, lines); end["status"] != "ok" || stdoutOf(lines) != fmt.Sprintf("%d\n", i*2) {
			t.Errorf("valid request ok%d after a malformed line: %v %q", i, end, stdoutOf(lines))
		}
	}
	c.waitFor("a request_error per malformed line", func() bool {
		n := 0
		for _, m := range c.noID {
			if m["type"] == "request_error" {
				n++
			}
		}
		for _, lines := range c.byID {
			n += len(ofType(lines, "request_error"))
		}
		return n >= len(malformed)
	})
	if errs := ofType(c.byID["m14"], "request_error"); len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]["error"]), `"A B" is not an environment variable name: it holds a space`) {
		t.Errorf("env with a name no shell can name: %v; want a request_error saying what is wrong with it", c.byID["m14"])
	}

	// A cancel mid-cell; the session survives with its state.
	c.send(map[string]any{"op": "eval", "id": "c1", "session": "A", "cwd": dir, "cells": []any{py("keep = 7"), py("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")}})
	c.waitFor("c1 sleeping", func() bool { return strings.Contains(stdoutOf(c.byID["c1"]), "sleeping") })
	c.send(map[string]any{"op": "cancel", "id": "c1"})
	lines := c.result("c1")
	if end := endOf(t, lines); end["status"] != "cancelled" || end["failedCell"] != float64(1) {
		t.Fatalf("cancelled request ended %v", end)
	}
	c.send(map[string]any{"op": "eval", "id": "c2", "session": "A", "cwd": dir, "cells": []any{py("print(keep)")}})
	if out := stdoutOf(c.result("c2")); out != "7\n" {
		t.Fatalf("state after a cancel: %q, want 7", out)
	}

	// A timeout.
	c.send(map[string]any{"op": "eval", "id": "t1", "session": "A", "cwd": dir, "cells": []any{map[string]any{"code": "while True: pass", "timeout": 1}}})
	lines = c.result("t1")
	cellEnd := ofType(lines, "cell_end")[0]
	if cellEnd["status"] != "timeout" || !strings.Contains(cellEnd["output"].(map[string]any)["text"].(string), "Command timed out after 1 seconds") {
		t.Fatalf("timeout cell_end = %v", cellEnd)
	}

	// A reset.
	c.send(map[string]any{"op": "eval", "id": "r0", "session": "R", "cwd": dir, "cells": []any{py("v = 1")}})
	c.result("r0")
	c.send(map[string]any{"op": "reset", "id": "r1", "session": "R", "cwd": dir})
	c.waitFor("reset reply", func() bool { return len(ofType(c.byID["r1"], "reset")) == 1 })
	c.send(map[string]any{"op": "eval", "id": "r2", "session": "R", "cwd": dir, "cells": []any{py("print('v' in globals())")}})
	if out := stdoutOf(c.result("r2")); out != "False\n" {
		t.Fatalf("after reset: %q, want False", out)
	}

	// Per-call mode starts fresh.
	c.send(map[string]any{"op": "eval", "id": "p1", "session": "A", "cwd": dir, "mode": "per-call", "cells": []any{py("print('keep' in globals())")}})
	if out := stdoutOf(c.result("p1")); out != "False\n" {
		t.Fatalf("per-call saw session state: %q", out)
	}

	// Death with retry.
	marker := dir + "/died"
	once := fmt.Sprintf("import os\nif not os.path.exists(%q):\n    open(%q, 'w').close()\n    os.kill(os.getpid(), 9)\nprint('second life')", marker, marker)
	c.send(map[string]any{"op": "eval", "id": "d1", "session": "D", "cwd": dir, "cells": []any{py(once)}})
	lines = c.result("d1")
	cellEnd = ofType(lines, "cell_end")[0]
	if cellEnd["status"] != "ok" || cellEnd["retried"] != true || cellEnd["stateLost"] != true || !strings.Contains(stdoutOf(lines), "second life") {
		t.Fatalf("death retry cell_end = %v", cellEnd)
	}

	// An sh cell.
	c.send(map[string]any{"op": "eval", "id": "s1", "session": "A", "cwd": dir, "cells": []any{
		map[string]any{"language": "sh", "code": "cd /tmp && export SEEN=yes"},
		map[string]any{"language": "sh", "code": "echo $PWD $SEEN"}}})
	if out := stdoutOf(c.result("s1")); !strings.Contains(out, "/tmp yes") {
		t.Fatalf("sh cells: %q", out)
	}

	// Shutdown with work in flight: the default drains it.
	c.send(map[string]any{"op": "eval", "id": "f1", "session": "F", "cwd": dir, "cells": []any{py("import time\nprint('started', flush=True)\ntime.sleep(0.5)\nprint('finished')")}})
	c.waitFor("f1 to start", func() bool { return stdoutOf(c.byID["f1"]) != "" })
	c.send(map[string]any{"op": "shutdown"})
	lines = c.result("f1")
	if end := endOf(t, lines); end["status"] != "ok" || stdoutOf(lines) != "started\nfinished\n" {
		t.Fatalf("in-flight request at shutdown: %v %q", end, stdoutOf(lines))
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
	checkPidsGone(t, c.pids())
}

func TestServeShutdownCancels(t *testing.T) {
	c := startServe(t, "--drain=false", "--grace", "500ms")
	c.send(map[string]any{"op": "eval", "id": "x", "cells": []any{py("import time\nprint('go', flush=True)\ntime.sleep(60)")}})
	c.waitFor("x running", func() bool { return strings.Contains(stdoutOf(c.byID["x"]), "go") })
	c.stdin.Close()
	if end := endOf(t, c.result("x")); end["status"] != "cancelled" {
		t.Fatalf("request at EOF with --drain=false ended %v", end)
	}
}
