package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/sessions"
)

// SessionsOutput lists the live sessions.
type SessionsOutput struct {
	Sessions []sessions.Info `json:"sessions"`
}

// SessionInput names a session for reset and close.
type SessionInput struct {
	Session string `json:"session"`
	Cwd     string `json:"cwd,omitempty"`
}

// SessionOutput says what reset or close did.
type SessionOutput struct {
	Session string `json:"session"`
	Existed bool   `json:"existed" jsonschema:"a session with this id (and cwd, when given) was open"`
}

func (s *Server) addSessionTools() {
	s.addEvalTool()
	addTool(s, &sdk.Tool{
		Name:  "sessions",
		Title: "List sessions",
		Description: "List the live sessions: id, cwd, interpreter, which languages have a running interpreter, " +
			"whether a cell is running, and when each was last used. Idle sessions close after a while " +
			"(default 5 minutes) and the least recently used idle one closes when too many are open; " +
			"a closed session's state is gone.",
		InputSchema: object(nil, map[string]*jsonschema.Schema{}),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.listSessions)
	addTool(s, &sdk.Tool{
		Name:  "reset",
		Title: "Reset a session",
		Description: "Restart a session's interpreters: all its variables and imports are gone, the session " +
			"stays. Runs after the session's queued calls. Without cwd every session with this id is reset. " +
			"existed=false means no such session was open, so nothing was reset.",
		InputSchema: object([]string{"session"}, map[string]*jsonschema.Schema{
			"session": bounded(maxIDChars, str("Session id to reset.")),
			"cwd":     bounded(maxIDChars, str("Only the session in this working directory.")),
		}),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.resetSession)
	addTool(s, &sdk.Tool{
		Name:  "close",
		Title: "Close a session",
		Description: "Close the session with this id and shut its interpreters down (without cwd every " +
			"session with this id, in any cwd); a cell " +
			"running in it is interrupted at once (killed after the grace window if it does not stop) and its " +
			"eval ends killed. A later eval with the id starts a fresh session. existed=false means none was open.",
		InputSchema: object([]string{"session"}, map[string]*jsonschema.Schema{
			"session": bounded(maxIDChars, str("Session id to close.")),
			"cwd":     bounded(maxIDChars, str("Only the session in this working directory (which need not exist any more).")),
		}),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.closeSession)
}

func (s *Server) listSessions(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, SessionsOutput, error) {
	infos := s.cfg.Registry.Sessions()
	out := SessionsOutput{Sessions: infos}
	if out.Sessions == nil {
		out.Sessions = []sessions.Info{}
	}
	if len(infos) == 0 {
		return text("no sessions are open"), out, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, most recently used first:\n", plural.Of(len(infos), "session"))
	for _, in := range infos {
		state := "idle"
		if in.Busy {
			state = "running a cell"
		}
		langs := strings.Join(in.Languages, ",")
		if langs == "" {
			langs = "no interpreter running"
		}
		fmt.Fprintf(&b, "- %s in %s (%s; %s; last used %s ago)\n", in.Session, in.Cwd, langs, state,
			time.Since(in.LastUsed).Round(time.Second))
	}
	return text(b.String()), out, nil
}

func (s *Server) resetSession(ctx context.Context, req *sdk.CallToolRequest, in SessionInput) (*sdk.CallToolResult, SessionOutput, error) {
	if in.Session == "" {
		return nil, SessionOutput{}, fmt.Errorf(`"session" must name the session to reset`)
	}
	defer s.keepAlive(ctx, req, "resetting session "+in.Session)() // after its queued calls
	existed, err := s.cfg.Registry.ResetSession(ctx, in.Session, in.Cwd)
	if err != nil {
		return nil, SessionOutput{}, fmt.Errorf("reset %q: %w", in.Session, err)
	}
	out := SessionOutput{Session: in.Session, Existed: existed}
	if !existed {
		return text(fmt.Sprintf("no session %q is open%s; nothing was reset", in.Session, inCwd(in.Cwd))), out, nil
	}
	return text(fmt.Sprintf("session %q reset: its interpreters restarted and earlier state is gone", in.Session)), out, nil
}

func (s *Server) closeSession(_ context.Context, _ *sdk.CallToolRequest, in SessionInput) (*sdk.CallToolResult, SessionOutput, error) {
	if in.Session == "" {
		return nil, SessionOutput{}, fmt.Errorf(`"session" must name the session to close`)
	}
	existed := s.cfg.Registry.CloseSessionIn(in.Session, in.Cwd)
	out := SessionOutput{Session: in.Session, Existed: existed}
	if !existed {
		return text(fmt.Sprintf("no session %q is open%s; nothing was closed", in.Session, inCwd(in.Cwd))), out, nil
	}
	return text(fmt.Sprintf("session %q closed; its state is gone", in.Session)), out, nil
}

func inCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	return " in " + cwd
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}
