package mcp

import (
	"net/http"
	"sync"
	"time"
)

// idleSessions ends an MCP session of the HTTP transport that had no
// request of its client open for timeout: no POST (a call's POST stays
// open while its client awaits the answer) and no GET stream (a client
// listens on one for as long as it lives). Nothing ended the session of a
// client that vanished without a DELETE (killed, its laptop shut): it
// lived for ever, and so did the calls it had started, their cells
// running to their own timeouts for nobody. The SDK's own
// StreamableHTTPOptions.SessionTimeout does not fit: it counts only POSTs,
// so it ends the session of a client that is listening on its GET stream,
// and it closes the session without cancelling its calls, waiting for them
// to end.
//
// A call still running when its session ends is one whose client stopped
// awaiting its answer (its POST is gone, and with no event store the
// answer could not be resumed): end cancels it, as at a DELETE. A request
// with the id of a session being ended gets 404, as the SDK answers it
// once the session is gone: the spec's answer to an expired session, which
// tells the client to initialize anew.
type idleSessions struct {
	timeout time.Duration
	live    func(id string) bool // the SDK holds a session with this id
	end     func(id string)      // ends the session as a DELETE does

	mu       sync.Mutex
	sessions map[string]*idleSession
}

type idleSession struct {
	id      string
	open    int       // its requests being served
	since   time.Time // when open last fell to 0
	timer   *time.Timer
	expired bool // being ended
}

func newIdleSessions(timeout time.Duration, live func(string) bool, end func(string)) *idleSessions {
	return &idleSessions{timeout: timeout, live: live, end: end, sessions: map[string]*idleSession{}}
}

// begin notes a request of session id being served until release. It
// reports false, and the request is to be answered 404, when the session
// is being ended. An id the SDK does not hold is left to the SDK's answer.
func (s *idleSessions) begin(id string) (release func(), ok bool) {
	if s == nil || id == "" {
		return func() {}, true
	}
	s.mu.Lock()
	e := s.sessions[id]
	s.mu.Unlock()
	if e == nil && !s.live(id) {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e = s.sessions[id]; e == nil {
		e = &idleSession{id: id}
		s.sessions[id] = e
	}
	if e.expired {
		return nil, false
	}
	e.open++
	if e.timer != nil {
		e.timer.Stop()
	}
	return sync.OnceFunc(func() { s.release(e) }), true
}

// started starts the idle clock of a session its initialize just opened.
func (s *idleSessions) started(id string) {
	if release, ok := s.begin(id); ok {
		release()
	}
}

func (s *idleSessions) release(e *idleSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.open--; e.open > 0 || s.sessions[e.id] != e {
		return
	}
	e.since = time.Now()
	if e.timer == nil {
		e.timer = time.AfterFunc(s.timeout, func() { s.fire(e) })
	} else {
		e.timer.Reset(s.timeout)
	}
}

// fire ends e's session if it is still idle and has been for timeout.
func (s *idleSessions) fire(e *idleSession) {
	s.mu.Lock()
	if s.sessions[e.id] != e || e.expired || e.open > 0 {
		s.mu.Unlock()
		return
	}
	if left := s.timeout - time.Since(e.since); left > 0 {
		e.timer.Reset(left)
		s.mu.Unlock()
		return
	}
	e.expired = true
	s.mu.Unlock()
	s.end(e.id)
	s.mu.Lock()
	if s.sessions[e.id] == e {
		delete(s.sessions, e.id)
	}
	s.mu.Unlock()
}

// forget drops session id, which a DELETE ended.
func (s *idleSessions) forget(id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.sessions[id]; e != nil && !e.expired {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(s.sessions, id)
	}
}

// notFound answers a request of a session being ended as the SDK answers
// one of a session it does not hold.
func (s *idleSessions) notFound(w http.ResponseWriter) {
	http.Error(w, "session not found: it ended after "+s.timeout.String()+
		" without a request from its client; start a new session (initialize without Mcp-Session-Id)", http.StatusNotFound)
}
