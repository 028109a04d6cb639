package tests

import (
	"fmt"
	"os"

	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// heldStarts is a directory whose sitecustomize (holdStart) holds the
// first runner interpreter started while its gate exists (gated), on its
// "starting" and "hold" FIFOs; PYTHONPATH=site puts it in force.
type heldStarts struct{ dir, site, gate string }

func newHeldStarts(t *testing.T, gated bool) heldStarts {
	t.Helper()
	dir := t.TempDir()
	h := heldStarts{dir: dir, site: filepath.Join(dir, "site"), gate: filepath.Join(dir, "gate")}
	if err := os.MkdirAll(h.site, 0o700); err != nil {
		t.Fatal(err)
	}
	custom := fmt.Sprintf(holdStart, strconv.Quote(h.gate), strconv.Quote(filepath.Join(dir, "starting")), strconv.Quote(filepath.Join(dir, "hold")))
	if err := os.WriteFile(filepath.Join(h.site, "sitecustomize.py"), []byte(custom), 0o600); err != nil {
		t.Fatal(err)
	}
	if gated {
		if err := os.WriteFile(h.gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Mkfifo(t, dir, "starting")
	testkit.Mkfifo(t, dir, "hold")
	return h
}

// awaitStart returns once the held interpreter has started (its pid read).
func (h heldStarts) awaitStart(t *testing.T) {
	t.Helper()
	readFIFO(t, filepath.Join(h.dir, "starting"))
}

// runningCell is a cell that opens the FIFO fifo for writing (its reader
// then knows it runs) and sleeps until interrupted.
func runningCell(fifo string) string {
	return "open(" + strconv.Quote(fifo) + ", 'w').write('x')\nimport time\nwhile True: time.sleep(1)"
}

// Every cell a request's cancellation came before says so in its cell_end
// ("notStarted", status cancelled), whichever way it did not start: its
// request queued behind another, its interpreter starting, or its turn
// after a cell that was running. The one cancelled as it ran does not.
// A queued request's cells said "cancelled before it started" with
// nothing a client (run --session's renderer) could tell them by.
func TestServeSaysWhichCellsNeverStarted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gated bool
		// send sends the request "r" (and any before it) and returns once
		// a cancel of r would find its cells where the row says; the ids
		// to cancel after r's end, and r's cells that started.
		send   func(t *testing.T, c *serveClient, h heldStarts) (after []string, started int)
		nCells int
	}{
		{"queued behind another request", false, func(t *testing.T, c *serveClient, h heldStarts) ([]string, int) {
			running := testkit.Mkfifo(t, h.dir, "running")
			c.send(map[string]any{"op": "eval", "id": "first", "session": "s", "cells": []any{py(runningCell(running))}})
			readFIFO(t, running)
			c.send(map[string]any{"op": "eval", "id": "r", "session": "s", "cells": []any{py("print(1)"), py("print(2)")}})
			return []string{"first"}, 0
		}, 2},
		{"while its interpreter starts", true, func(t *testing.T, c *serveClient, h heldStarts) ([]string, int) {
			c.send(map[string]any{"op": "eval", "id": "r", "session": "s", "cells": []any{py("print(1)"), py("print(2)")}})
			h.awaitStart(t)
			return nil, 0
		}, 2},
		{"after a cell that ran", false, func(t *testing.T, c *serveClient, h heldStarts) ([]string, int) {
			running := testkit.Mkfifo(t, h.dir, "running")
			c.send(map[string]any{"op": "eval", "id": "r", "session": "s", "cells": []any{py(runningCell(running)), py("print(2)"), py("print(3)")}})
			readFIFO(t, running)
			return nil, 1
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeldStarts(t, tc.gated)
			c := startServeEnv(t, []string{"PYTHONPATH=" + h.site}, "--grace", "20s")
			after, started := tc.send(t, c, h)
			c.send(map[string]any{"op": "cancel", "id": "r"})
			ends := ofType(c.result("r"), "cell_end")
			if len(ends) != tc.nCells {
				t.Fatalf("%d cell_end lines, want %d: %v", len(ends), tc.nCells, ends)
			}
			for i, e := range ends {
				notStarted, _ := e["notStarted"].(bool)
				if e["status"] != "cancelled" || notStarted != (i >= started) {
					t.Errorf("cell %d's cell_end %v; want status cancelled, notStarted %v", i, e, i >= started)
				}
				if i >= started && e["message"] != "request cancelled before the cell started" {
					t.Errorf("cell %d's message %q", i, e["message"])
				}
			}
			for _, id := range after {
				c.send(map[string]any{"op": "cancel", "id": id})
				c.result(id)
			}
		})
	}
}

// run tells the cells a Ctrl-C came before in one line, as never run,
// whichever way they did not start: its interpreter starting (a one-shot
// run), or its request queued behind another command's (run --session);
// after a cell that ran, TestRunSaysOnceWhichCellsDidNotRun. The queued
// ones were shown as cells that ran and were cancelled.
func TestRunSaysWhichCellsNeverStarted(t *testing.T) {
	const want = "[cells 1\u20132 were not run: the run was cancelled before they started]\n"
	t.Run("while its interpreter starts", func(t *testing.T) {
		h := newHeldStarts(t, true)
		cmd := command(t, "run", "-c", "print(1)", "-c", "print(2)")
		cmd.Env = append(cmd.Env, "PYTHONPATH="+h.site)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		h.awaitStart(t)
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
	})
	t.Run("queued behind another command (run --session)", func(t *testing.T) {
		h := newDaemonHome(t)
		daemon := h.pid("other") // started, and its pid
		first, _ := h.startRunning(t, "run", "--session", "s", "-c", "import time\nprint('running', flush=True)\ntime.sleep(60)")
		before := sockets(t, daemon)
		cmd := h.cmd("run", "--session", "s", "-c", "print(1)", "-c", "print(2)")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		// Connected, it sent its cells with the connection, and its
		// Ctrl-C's cancel follows them on it.
		awaitSockets(t, daemon, before+1)
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
		first.Process.Signal(syscall.SIGINT)
		first.Wait()
	})
}

// sockets counts the sockets process pid has open.
func sockets(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// awaitSockets returns once process pid has at least n sockets open.
func awaitSockets(t *testing.T, pid, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for sockets(t, pid) < n {
		if time.Now().After(deadline) {
			t.Fatalf("process %d never had %d sockets open", pid, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
