package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

func strconvQuote(s string) string { return strconv.Quote(s) }

func TestRunTool(t *testing.T) {
	stdout, stderr, code := runEvalhost(t, "", "run", "--tool", "echo=cat", "--tool", "fail=echo broken >&2; exit 4",
		"-c", "print(tool.echo(x=1, y='two'))",
		"-c", "try:\n    tool.fail()\nexcept ToolError as e:\n    print('ToolError:', e)",
		"-c", "print(tool('echo', z=[1, 2]))")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"{'x': 1, 'y': 'two'}", "ToolError:", "broken", "{'z': [1, 2]}"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
	}
}

// Without --tool, run starts no bridge, and a tool call says why it fails.
func TestRunWithoutTools(t *testing.T) {
	stdout, stderr, code := runEvalhost(t, "", "run",
		"-c", "try:\n    tool.echo(x=1)\nexcept ToolError as e:\n    print('ToolError:', e)\nimport os\nprint(sorted(k for k in os.environ if k.startswith('PI_TOOL_BRIDGE_')))")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := "ToolError: unknown tool 'echo': no tools are configured (pass --tool NAME=COMMAND)\n['PI_TOOL_BRIDGE_NONE', 'PI_TOOL_BRIDGE_SESSION']\n"
	if stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}

func TestServeToolCall(t *testing.T) {
	c := startServe(t)
	tokenFile := t.TempDir() + "/token"
	code := "v = tool.lookup(key='k1')\nprint('got', v)\ntry:\n    tool.lookup(key='bad')\nexcept ToolError as e:\n    print('error', e)\nimport os\nopen(" + strconvQuote(tokenFile) + ", 'w').write(os.environ['PI_TOOL_BRIDGE_TOKEN'])"
	c.send(map[string]any{"op": "eval", "id": "t1", "session": "tools", "cells": []any{py(code)}})
	var calls []map[string]any
	c.waitFor("first tool_call", func() bool { calls = toolCalls(c.byID["t1"]); return len(calls) >= 1 })
	first := calls[0]
	if first["id"] != "t1" || first["cell"] != float64(0) || first["session"] != "tools" || first["name"] != "lookup" {
		t.Fatalf("tool_call = %v", first)
	}
	c.send(map[string]any{"op": "tool_result", "call": first["call"], "ok": true, "value": map[string]any{"answer": 42}})
	c.waitFor("second tool_call", func() bool { calls = toolCalls(c.byID["t1"]); return len(calls) >= 2 })
	c.send(map[string]any{"op": "tool_result", "call": calls[1]["call"], "ok": false, "error": "no such key"})
	lines := c.result("t1")
	out := stdoutOf(lines)
	if !strings.Contains(out, "got {'answer': 42}") || !strings.Contains(out, "error no such key") {
		t.Fatalf("cell output %q", out)
	}
	// A late answer for an answered call is refused, and the server goes on.
	c.send(map[string]any{"op": "tool_result", "call": first["call"], "ok": true, "value": 1})
	c.waitFor("late tool_result refused", func() bool {
		for _, m := range c.noID {
			if m["type"] == "request_error" && strings.Contains(m["error"].(string), "not pending") {
				return true
			}
		}
		return false
	})
	// The token is only in the interpreter's environment, never on the wire.
	token, err := os.ReadFile(tokenFile)
	if err != nil || len(token) < 32 {
		t.Fatalf("cell did not see a bridge token: %v %q", err, token)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	all, _ := json.Marshal([]any{c.noID, c.byID})
	if strings.Contains(string(all), string(token)) {
		t.Fatalf("the bridge token appears in serve's output")
	}
}

func toolCalls(lines []map[string]any) []map[string]any { return ofType(lines, "tool_call") }

// Kernels behind the gateway reach the same tools: the run id travels in
// the execute_request's metadata.
func TestRunToolGatewayBackend(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { run("gateway", "stop") })
	out, err := run("run", "--backend", "gateway", "--tool", "echo=cat", "-c", "print(tool.echo(a=1))", "-c", "print(tool('echo', b=[2]))")
	if err != nil || !strings.Contains(out, "{'a': 1}") || !strings.Contains(out, "{'b': [2]}") {
		t.Fatalf("tool calls from gateway kernels: %v\n%s", err, out)
	}
}
