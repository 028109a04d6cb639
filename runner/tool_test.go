package runner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// fakeBridge is the wire contract of bridge/doc.go, small enough to see:
// it checks the token and the body and answers by tool name.
type fakeBridge struct {
	mu    sync.Mutex
	calls []map[string]any
	slow  chan struct{} // if set, told when a "slow" call arrives
}

func (f *fakeBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/v1/tool" || r.Method != http.MethodPost {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"ok":false,"error":"not found"}`))
		return
	}
	if r.Header.Get("Authorization") != "Bearer tok" {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"ok":false,"error":"wrong token"}`))
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": err.Error()})
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, body)
	f.mu.Unlock()
	if body["run"] != "r1" || body["session"] != "s1" {
		w.WriteHeader(http.StatusConflict)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "run " + body["run"].(string) + " is not executing"})
		return
	}
	switch body["name"] {
	case "echo":
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "value": body["args"]})
	case "slow": // answers when the caller goes away
		if f.slow != nil {
			f.slow <- struct{}{}
		}
		<-r.Context().Done()
	case "fail":
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "no such file: x"})
	default:
		w.Write([]byte("not json"))
	}
}

func TestToolHelper(t *testing.T) {
	fb := &fakeBridge{}
	srv := httptest.NewServer(fb)
	defer srv.Close()
	p := start(t, startOpts{env: []string{"PI_TOOL_BRIDGE_URL=" + srv.URL, "PI_TOOL_BRIDGE_TOKEN=tok", "PI_TOOL_BRIDGE_SESSION=s1"}})
	for _, tc := range []struct {
		name, code, run, want string
	}{
		{"attribute call returns the value", `tool.echo(path="x", n=2)`, "r1", `{'n': 2, 'path': 'x'}`},
		{"named call", `tool("echo", a=[1, None])`, "r1", `{'a': [1, None]}`},
		{"ok false raises ToolError", `
try:
    tool.fail(path="x")
except ToolError as e:
    r = "ToolError: " + str(e)
r`, "r1", `'ToolError: no such file: x'`},
		{"non-2xx carries the error", `
try:
    tool.echo()
except ToolError as e:
    r = str(e)
r`, "stale", `'run stale is not executing'`},
		{"non-JSON reply", `
try:
    tool.weird()
except ToolError as e:
    r = str(e)
r`, "r1", `"tool 'weird': bridge answered HTTP 200 with non-JSON b'not json'"`},
		{"unserialisable args", `
try:
    tool.echo(x=object())
except ToolError as e:
    r = str(e).split(":")[1].strip()
r`, "r1", `'arguments are not JSON-serialisable'`},
		{"no run id: unavailable", `
try:
    tool.echo()
except ToolError as e:
    r = str(e)
r`, "", `'tool bridge is unavailable: EVALHOST_RUN not set (tools work only in cells run by evalhost with a tool bridge)'`},
		{"20 threads", `
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(20) as ex:
    got = list(ex.map(lambda i: tool.echo(i=i)["i"], range(20)))
got == list(range(20))`, "r1", "True"},
		// to_thread came in 3.9; an executor thread is the same case before.
		{"asyncio acall and to_thread", `
import asyncio
async def main():
    a = await tool.acall("echo", i=1)
    if hasattr(asyncio, "to_thread"):
        b = await asyncio.to_thread(tool.echo, i=2)
    else:
        b = await asyncio.get_running_loop().run_in_executor(None, lambda: tool.echo(i=2))
    return [a["i"], b["i"]]
await main()`, "r1", "[1, 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := map[string]any{"code": tc.code}
			if tc.run != "" {
				req["run"] = tc.run
			}
			c := p.runReq(req)
			if c.done().Status != "ok" {
				t.Fatalf("cell failed: %+v", c.frames)
			}
			wantResult(tc.want)(t, c)
		})
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.calls) == 0 {
		t.Fatal("the bridge saw no calls")
	}
	first := fb.calls[0]
	if first["session"] != "s1" || first["run"] != "r1" || first["name"] != "echo" {
		t.Errorf("first call body %v", first)
	}
}

// A cell interrupted while it waits on a tool call is cancelled with a
// traceback that ends at the cell's call, not inside http.client.
func TestToolCallInterrupted(t *testing.T) {
	fb := &fakeBridge{slow: make(chan struct{}, 1)}
	srv := httptest.NewServer(fb)
	defer srv.Close()
	p := start(t, startOpts{env: []string{"PI_TOOL_BRIDGE_URL=" + srv.URL, "PI_TOOL_BRIDGE_TOKEN=tok", "PI_TOOL_BRIDGE_SESSION=s1"}})
	p.seq++
	id := "c-tool-int"
	p.send(map[string]any{"id": id, "run": "r1", "code": "tool.slow()"})
	select {
	case <-fb.slow:
	case <-time.After(30 * time.Second):
		t.Fatal("the tool call never reached the bridge")
	}
	p.interrupt()
	c := p.collect(id, nil)
	if !c.done().Cancelled {
		t.Fatalf("done %+v, want cancelled", c.done())
	}
	e, ok := c.first(frames.TypeError)
	if !ok {
		t.Fatalf("no error frame: %+v", c.frames)
	}
	tb := strings.Join(e.Traceback, "\n")
	if e.Ename != "KeyboardInterrupt" || !strings.Contains(tb, "tool.slow()") || strings.Contains(tb, "http") || strings.Contains(tb, "socket") {
		t.Errorf("traceback:\n%s", tb)
	}
	wantResult("'alive'")(t, p.run("'alive'"))
}

func TestToolHelperWithoutBridge(t *testing.T) {
	p := start(t, startOpts{})
	c := p.runReq(map[string]any{"code": "tool.read(path='x')", "run": "r1"})
	e := wantError(t, c, "ToolError")
	for _, v := range []string{"tool bridge is unavailable", "PI_TOOL_BRIDGE_URL", "PI_TOOL_BRIDGE_TOKEN", "PI_TOOL_BRIDGE_SESSION"} {
		if !strings.Contains(e.Evalue, v) {
			t.Errorf("error %q lacks %q", e.Evalue, v)
		}
	}
}

// A host with no tools sets PI_TOOL_BRIDGE_NONE instead of starting a
// bridge: a call says no tools are configured, not that a bridge is missing.
func TestToolHelperWithNoTools(t *testing.T) {
	p := start(t, startOpts{env: []string{"PI_TOOL_BRIDGE_NONE=1"}})
	c := p.runReq(map[string]any{"code": "tool.read(path='x')", "run": "r1"})
	e := wantError(t, c, "ToolError")
	if want := `unknown tool 'read': no tools are configured (pass --tool NAME=COMMAND)`; e.Evalue != want {
		t.Errorf("error %q, want %q", e.Evalue, want)
	}
}
