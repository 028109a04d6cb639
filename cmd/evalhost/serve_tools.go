package main

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/sessions"
)

// serveTools answers tool calls from cells by asking the serve client: a
// call becomes a tool_call line, the client's tool_result resolves it.
type serveTools struct {
	out    *lineWriter
	relay  *bridge.Relay
	server *bridge.Server

	mu      sync.Mutex
	runs    map[string]sessions.RunInfo // active run id -> where it runs
	pending map[string]bool             // calls sent to the client, not yet answered
	stopped bool                        // the server reads no more lines: no answer can come
}

// errNoAnswer fails tool calls once the server stopped reading requests.
const errNoAnswer = "evalhost serve stopped reading requests (shutdown or end of stdin), so no tool_result can answer this call"

func newServeTools(out *lineWriter) *serveTools {
	t := &serveTools{out: out, runs: map[string]sessions.RunInfo{}, pending: map[string]bool{}}
	t.relay = bridge.NewRelay(t.send, t.abandon)
	t.server = bridge.New(t.relay, bridge.Options{})
	return t
}

// runHook records which request and cell a run id belongs to, then lets the
// bridge accept calls from it.
func (t *serveTools) runHook(run sessions.RunInfo, active bool) {
	t.mu.Lock()
	if active {
		t.runs[run.Run] = run
	} else {
		delete(t.runs, run.Run)
	}
	t.mu.Unlock()
	t.server.RunHook(run.Session, run.Run, active)
}

func (t *serveTools) send(callID string, c bridge.Call) error {
	t.mu.Lock()
	run, ok := t.runs[c.Run]
	stopped := t.stopped
	if ok && !stopped {
		t.pending[callID] = true
	}
	t.mu.Unlock()
	if stopped {
		return errors.New(errNoAnswer)
	}
	if !ok {
		return errors.New("the cell that made this call is no longer running")
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	t.out.object(struct {
		Type    string          `json:"type"`
		Call    string          `json:"call"`
		ID      string          `json:"id"`
		Cell    int             `json:"cell"`
		Session string          `json:"session"`
		Name    string          `json:"name"`
		Args    json.RawMessage `json:"args"`
	}{"tool_call", callID, run.Request, run.Cell, c.Session, c.Name, args})
	return nil
}

// abandon tells the client a call's cell ended before it was answered, so it
// can stop working on it; a later tool_result for it is refused.
func (t *serveTools) abandon(callID string) {
	t.mu.Lock()
	delete(t.pending, callID)
	t.mu.Unlock()
	t.out.object(map[string]any{"type": "tool_call_abandoned", "call": callID})
}

// resolve handles a tool_result line.
func (t *serveTools) resolve(root gjson.Result) *requestError {
	call := root.Get("call")
	if call.Type != gjson.String || call.Str == "" {
		return badRequest(root, `tool_result needs the "call" id of a tool_call`)
	}
	ok := root.Get("ok")
	if !ok.IsBool() {
		return badRequest(root, `tool_result needs "ok": true with a "value", or false with an "error"`)
	}
	var value json.RawMessage
	if v := root.Get("value"); v.Exists() {
		value = json.RawMessage(v.Raw)
	}
	msg := root.Get("error").String()
	if !ok.Bool() && msg == "" {
		msg = "the tool failed without a message"
	}
	err := t.relay.Resolve(call.Str, ok.Bool(), value, msg)
	if err == nil {
		t.mu.Lock()
		delete(t.pending, call.Str)
		t.mu.Unlock()
	}
	if err != nil {
		if errors.Is(err, bridge.ErrNotPending) {
			return badRequest(root, "tool_result for call %q, which is not pending (unknown, already answered, or abandoned when its cell ended)", call.Str)
		}
		return badRequest(root, "tool_result: %v", err)
	}
	return nil
}

// stop fails the calls waiting for the client and every later one: once the
// server stops reading (shutdown, end of stdin, a signal) no tool_result can
// arrive, and a draining cell would otherwise wait for it until its timeout.
func (t *serveTools) stop() {
	t.mu.Lock()
	t.stopped = true
	calls := make([]string, 0, len(t.pending))
	for id := range t.pending {
		calls = append(calls, id)
	}
	clear(t.pending)
	t.mu.Unlock()
	for _, id := range calls {
		_ = t.relay.Resolve(id, false, nil, errNoAnswer)
	}
}
