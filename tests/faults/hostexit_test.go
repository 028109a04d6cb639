package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// reviewSpawn is the cell of the report that found a setsid grandchild
// outliving a clean exit: a shell in its own session leaves a job behind.
const reviewSpawn = "import subprocess\nsubprocess.Popen('sleep 779 &', shell=True, start_new_session=True)\n"

// startExitHost starts evalhost run, serve or mcp running the spawning cell
// of lang (idle: it ends) in dir.
func startExitHost(t *testing.T, kind, lang, dir string) *host {
	t.Helper()
	code := spawnCode(lang, false)
	if lang == "py" {
		code = reviewSpawn + code
	}
	args := []string{kind}
	if kind == "run" {
		args = append(args, "--cwd", dir, "--language", lang, "--timeout", "600", "-c", code)
	}
	cmd := exec.Command(evalhostBinary(t), args...)
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
	h := launchHost(t, cmd, kind)
	var reqs []any
	cell := map[string]any{"language": lang, "code": code, "timeout": 600}
	switch kind {
	case "serve":
		reqs = []any{map[string]any{"op": "eval", "id": "k", "session": "s", "cwd": dir, "cells": []any{cell}}}
	case "mcp":
		reqs = []any{
			map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "faults", "version": "1"}}},
			map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
			map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
				"name": "eval", "arguments": map[string]any{"session": "s", "cwd": dir, "cells": []any{cell}}}},
		}
	}
	for _, req := range reqs {
		b, _ := json.Marshal(req)
		if _, err := h.stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// When evalhost run, serve or mcp ends normally (its cell done, the end of
// stdin, SIGTERM) after a cell started processes of every kind, setsid
// ones included, none of them outlives it.
func TestHostExits(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	t.Cleanup(leakcheck.Watchdog(t, watchdogAfter))
	type end func(h *host)
	eof := func(h *host) { _ = h.stdin.Close() }
	term := func(h *host) { _ = h.cmd.Process.Signal(syscall.SIGTERM) }
	tests := []struct {
		kind, lang, how string
		end             end
	}{
		{"run", "py", "cell done", nil}, {"run", "sh", "cell done", nil},
		{"serve", "py", "stdin EOF", eof}, {"serve", "sh", "stdin EOF", eof},
		{"serve", "py", "SIGTERM", term}, {"serve", "sh", "SIGTERM", term},
		{"mcp", "py", "stdin EOF", eof}, {"mcp", "sh", "stdin EOF", eof},
		{"mcp", "py", "SIGTERM", term}, {"mcp", "sh", "SIGTERM", term},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %s %s", tc.kind, tc.lang, tc.how), func(t *testing.T) {
			dir := t.TempDir()
			h := startExitHost(t, tc.kind, tc.lang, dir)
			// run exits by itself once its cell ends, so it is not awaited idle.
			interp, spawned, err := h.awaitPIDs(tc.kind != "run")
			if err != nil {
				h.kill()
				t.Fatalf("host: %v", err)
			}
			// A host whose reaper cannot end what the cell left waits for
			// it forever; that is a failure, not a hang.
			stuck := time.AfterFunc(60*time.Second, func() { _ = h.cmd.Process.Kill() })
			if tc.end != nil {
				tc.end(h)
			}
			for range h.lines {
			}
			err = h.cmd.Wait()
			stuck.Stop()
			if err != nil {
				t.Errorf("host ended with %v; want a clean exit", err)
			}
			exited := time.Now()
			for _, pid := range append([]int{interp}, spawned...) {
				if !leakcheck.Gone(pid, time.Until(exited.Add(hangBound))) {
					t.Errorf("process %d still ran %s after its host's exit", pid, hangBound)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if left := leakcheck.GoneFromDir(dir, time.Until(exited.Add(hangBound))); len(left) > 0 {
				t.Errorf("processes in the cell's directory still ran %s after the host's exit: %s", hangBound, strings.Join(left, "; "))
				for _, p := range left {
					var pid int
					if _, err := fmt.Sscan(p, &pid); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		})
	}
}
