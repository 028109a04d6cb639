package tests

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Issue 19: SIGINT (a terminal's Ctrl-C) used to kill serve at once, with
// no end line for the requests in flight. It now acts as SIGTERM: serve
// drains them; a second signal ends them at once, leaving no interpreter.
func TestServeSignals(t *testing.T) {
	tests := []struct {
		name string
		sig  os.Signal
	}{
		{"SIGINT", os.Interrupt},
		{"SIGTERM", syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name+" drains", func(t *testing.T) {
			c := startServeEnv(t, []string{"EVALHOST_DEBUG=1"})
			flag := t.TempDir() + "/release"
			hold := "import os, time\nprint('go', flush=True)\nwhile not os.path.exists(" + strconvQuote(flag) + "): time.sleep(0.02)\nprint('finished')"
			c.send(map[string]any{"op": "eval", "id": "d", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
			c.waitFor("d running", func() bool { return strings.Contains(stdoutOf(c.byID["d"]), "go") })
			c.signal(tt.sig)
			c.waitFor("serve to take the signal", func() bool { return strings.Contains(c.stderr.String(), "stopping on signal") })
			if err := os.WriteFile(flag, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			lines := c.result("d")
			if end := endOf(t, lines); end["status"] != "ok" || stdoutOf(lines) != "go\nfinished\n" {
				t.Fatalf("request in flight at %s ended %v with stdout %q", tt.name, end, stdoutOf(lines))
			}
			if code := c.exitCode(); code != 0 {
				t.Fatalf("serve exited %d after draining, want 0; log:\n%s", code, c.log())
			}
			checkPidsGone(t, c.pids())
		})
	}
	t.Run("second signal ends the work at once", func(t *testing.T) {
		// The cell ignores SIGINT and the grace is long: only the second
		// signal's kill can end it.
		c := startServeEnv(t, []string{"EVALHOST_DEBUG=1"}, "--grace", "10m")
		hold := "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\ntime.sleep(600)"
		c.send(map[string]any{"op": "eval", "id": "h", "session": "H", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
		c.send(map[string]any{"op": "eval", "id": "q", "session": "H", "cells": []any{py("print('never')")}})
		c.waitFor("h running", func() bool { return strings.Contains(stdoutOf(c.byID["h"]), "go") })
		c.signal(os.Interrupt)
		c.waitFor("serve to take the signal", func() bool { return strings.Contains(c.stderr.String(), "stopping on signal") })
		c.signal(os.Interrupt)
		// The killed cell ends cancelled (the cancel came first) with its
		// interpreter's state lost.
		h := c.result("h")
		if end, cellEnd := endOf(t, h), ofType(h, "cell_end"); end["status"] != "cancelled" || len(cellEnd) != 1 || cellEnd[0]["stateLost"] != true {
			t.Errorf("h ended %v after %v", end, cellEnd)
		}
		if end := endOf(t, c.result("q")); end["status"] != "cancelled" {
			t.Errorf("q, queued behind h, ended %v", end)
		}
		if code := c.exitCode(); code != 130 {
			t.Fatalf("serve exited %d after a second signal, want 130; log:\n%s", code, c.log())
		}
		checkPidsGone(t, c.pids())
	})
}

// Issue 19: a request_error refusing a cancel or a duplicate eval carried
// only the eval's id, so a client took it for that eval's end. It names the
// refused op, and a duplicate's says the request with that id goes on.
func TestServeRequestErrorNamesOp(t *testing.T) {
	c := startServe(t)
	flag := t.TempDir() + "/release"
	hold := "import os, time\nprint('go', flush=True)\nwhile not os.path.exists(" + strconvQuote(flag) + "): time.sleep(0.02)"
	c.send(map[string]any{"op": "eval", "id": "x", "cells": []any{map[string]any{"code": hold, "timeout": 600}}})
	c.waitFor("x running", func() bool { return strings.Contains(stdoutOf(c.byID["x"]), "go") })
	c.send(map[string]any{"op": "eval", "id": "x", "cells": []any{py("print('duplicate')")}})
	c.waitFor("the duplicate's refusal", func() bool { return len(ofType(c.byID["x"], "request_error")) == 1 })
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if end := endOf(t, c.result("x")); end["status"] != "ok" {
		t.Fatalf("x ended %v", end)
	}
	c.send(map[string]any{"op": "cancel", "id": "x"}) // x has ended: too late
	c.waitFor("the late cancel's refusal", func() bool { return len(ofType(c.byID["x"], "request_error")) == 2 })
	c.mu.Lock()
	refusals := ofType(c.byID["x"], "request_error")
	c.mu.Unlock()
	for i, want := range []struct {
		op       string
		inFlight any
		says     string
	}{{"eval", true, "already in flight"}, {"cancel", nil, "no request"}} {
		if r := refusals[i]; r["op"] != want.op || r["inFlight"] != want.inFlight || !strings.Contains(r["error"].(string), want.says) {
			t.Errorf("refusal %d = %v, want op %q, inFlight %v, saying %q", i, r, want.op, want.inFlight, want.says)
		}
	}
}

func (c *serveClient) signal(sig os.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("signal %v: %v", sig, err)
	}
}

// exitCode waits for serve to exit by itself and returns its status.
func (c *serveClient) exitCode() int {
	c.t.Helper()
	err := c.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	c.t.Fatalf("waiting for serve: %v", err)
	return -1
}

func (c *serveClient) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}
