package serve

import (
	"encoding/json"
	"errors"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/sessions"
)

// Tool calls from cells go to the client: the bridge holds the runs calls
// may come from and the calls waiting for an answer; the Server only writes
// tool_call lines and reads tool_result ones.

// runHook lets the bridge accept calls from a run while its cell executes,
// naming the request and cell they come from.
func (s *Server) runHook(info sessions.RunInfo, active bool) {
	s.bridge.TrackRun(bridge.Run{Session: info.Session, ID: info.Run, Request: info.Request, Cell: info.Cell}, active)
}

func (s *Server) sendToolCall(callID string, c bridge.Call) error {
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	s.notice(ToolCall{Type: TypeToolCall, Call: callID, ID: c.Request, Cell: c.Cell, Session: c.Session, Name: c.Name, Args: args})
	return nil
}

// abandonToolCall tells the client a call's cell ended before it was
// answered, so it can stop working on it; a later tool_result is refused.
func (s *Server) abandonToolCall(callID string) {
	s.notice(ToolCallAbandoned{Call: callID, Type: TypeToolCallAbandoned})
}

// toolResult answers a tool_call.
func (s *Server) toolResult(req request) {
	if e := s.resolve(req); e != nil {
		s.requestError(e)
	}
}

func (s *Server) resolve(req request) *requestError {
	root := req.root
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
	switch err := s.relay.Resolve(call.Str, ok.Bool(), value, msg); {
	case errors.Is(err, bridge.ErrNotPending):
		return badRequest(root, "tool_result for call %q, which is not pending (unknown, already answered, or abandoned when its cell ended)", call.Str)
	case err != nil:
		return badRequest(root, "tool_result: %v", err)
	}
	return nil
}
