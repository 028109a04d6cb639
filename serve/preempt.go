package serve

import (
	"bytes"
	"fmt"
)

// Request ops split as golang.org/x/tools' jsonrpc2_v2 splits a Preempter
// from a Handler. Preempted ops are answered on the reader's goroutine as
// their line is read, in order with the lines around them, and must never
// block: a cancel, ping or tool_result is answered however busy the
// sessions are. Handled ops (handle.go) take their place in a session's
// queue and run on the goroutine that read them, which hands the reading on
// first (reader.go); the Server waits for them.
var preempted = map[string]func(*Server, request){
	"cancel":      (*Server).cancel,
	"close":       (*Server).closeSession,
	"sessions":    (*Server).sessions,
	"ping":        (*Server).ping,
	"tool_result": (*Server).toolResult,
}

// dispatch answers one request line, or takes its place and returns the
// work left, which the caller must run (the Server waits for it). stop says
// the server reads no more (a shutdown line, or it stopped taking requests).
// line is lent: the reader's buffer, read again once dispatch returns.
func (s *Server) dispatch(line []byte) (work func(), stop bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, false
	}
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	if s.stopped {
		return nil, true
	}
	req, err := parseRequest(line)
	if err != nil {
		s.requestError(err)
		return nil, false
	}
	if req.op == "shutdown" {
		return nil, true
	}
	if p, ok := preempted[req.op]; ok {
		p(s, req)
		return nil, false
	}
	if _, ok := handled[req.op]; ok && s.sent {
		s.accept() // counted unanswered: nobody can read its answer, so it is not run
		return nil, false
	}
	if h, ok := handled[req.op]; ok {
		work = h(s, req)
		if work != nil {
			s.wg.Add(1) // done by the goroutine that runs it (reader.go)
		}
		return work, false
	}
	s.requestError(badRequest(req.root, "unknown op %q; one of %s", req.op, opNames))
	return nil, false
}

// cancel ends a queued or running eval: its cells end cancelled.
func (s *Server) cancel(req request) {
	var id string
	if e := stringField(req.root, "id", true, &id); e != nil {
		s.requestError(e)
		return
	}
	s.mu.Lock()
	fl := s.inflight[id]
	s.mu.Unlock()
	if fl == nil {
		s.requestError(&requestError{id: id, op: req.op, msg: fmt.Sprintf("no request %q is queued or running", id)})
		return
	}
	fl.cancel()
}

// closeSession answers at once: the registry stops the session's
// interpreters in the background.
func (s *Server) closeSession(req request) {
	var id, session, cwd string
	if e := stringField(req.root, "session", true, &session); e != nil {
		s.requestError(e)
		return
	}
	if e := stringField(req.root, "cwd", false, &cwd); e != nil {
		s.requestError(e)
		return
	}
	_ = stringField(req.root, "id", false, &id)   // a reply needs no valid id
	existed := s.reg.CloseSessionIn(session, cwd) // cwd "": every cwd
	s.reply(Closed{Existed: existed, ID: id, Session: session, Type: TypeClosed})
}

func (s *Server) sessions(req request) {
	s.reply(Sessions{ID: req.id, Sessions: s.reg.Sessions(), Type: TypeSessions})
}

func (s *Server) ping(req request) { s.reply(Pong{ID: req.id, Type: TypePong}) }
