package bridge

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
)

// discardLog keeps net/http from logging: a library never logs.
var discardLog = log.New(io.Discard, "", 0)

// statusError is a refusal with its HTTP status.
type statusError struct {
	status int
	msg    string
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := s.admit(w, r)
	if err != nil {
		if err.status == http.StatusUnauthorized || err.status == http.StatusForbidden || err.status == http.StatusNotFound {
			// A client without the token gets no kept-alive connection:
			// any local user can connect, and a flood of idle ones held
			// for IdleTimeout ran evalhost out of file descriptors.
			w.Header().Set("Connection", "close")
		}
		s.reply(w, err.status, nil, err.msg)
		return
	}
	run, runCtx, ok := s.runs.lookup(runKey{c.Session, c.Run})
	if !ok {
		s.reply(w, http.StatusConflict, nil, notRunning(c))
		return
	}
	c.Request, c.Cell = run.Request, run.Cell
	value, callErr, abandoned := s.call(r.Context(), runCtx, c)
	switch {
	case abandoned != nil:
		s.reply(w, abandoned.status, nil, abandoned.msg)
	case callErr != nil:
		s.reply(w, http.StatusOK, nil, callErr.Error())
	default:
		s.reply(w, http.StatusOK, value, "")
	}
}

// admit checks everything before the call: path, query, token, method, body.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (Call, *statusError) {
	if r.URL.Path != Path {
		return Call{}, &statusError{http.StatusNotFound, fmt.Sprintf("no such endpoint %q; tool calls go to POST %s", r.URL.Path, Path)}
	}
	if r.URL.RawQuery != "" && s.tokenInQuery(r) {
		return Call{}, &statusError{http.StatusForbidden, "a token in the URL query is refused (URLs get logged); send it as the header Authorization: Bearer <PI_TOOL_BRIDGE_TOKEN>"}
	}
	if err := s.authorize(w, r); err != nil {
		return Call{}, err
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return Call{}, &statusError{http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; use POST %s", r.Method, Path)}
	}
	tooLarge := &statusError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over the %d-byte limit; pass large data through a file and send its path", s.opts.MaxBody)}
	if r.ContentLength > s.opts.MaxBody {
		// A client waiting for "100 Continue" is answered at once and
		// never sends the body; any other is sending it already.
		if !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			discardBody(r)
		}
		return Call{}, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		discardBody(r)
		return Call{}, tooLarge
	case err != nil:
		return Call{}, &statusError{http.StatusBadRequest, "cannot read request body: " + err.Error()}
	}
	c, err := ParseRequest(body)
	if err != nil {
		return Call{}, &statusError{http.StatusBadRequest, err.Error()}
	}
	return c, nil
}

// maxDiscard bounds how much of an oversized body is read and thrown away.
const maxDiscard = 1 << 30

// discardBody reads the rest of an oversized body before the 413 goes out. A
// client that writes its whole body before reading the reply (Python's
// http.client, which the cells' helper uses) would otherwise have the
// connection reset under it and report a broken pipe instead of the 413.
// ReadTimeout bounds how long this takes, maxDiscard how much.
func discardBody(r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, maxDiscard))
}

// tokenInQuery reports a query that names a token parameter or carries the
// token itself under any name.
func (s *Server) tokenInQuery(r *http.Request) bool {
	for k, vs := range r.URL.Query() {
		if k := strings.ToLower(k); k == "token" || k == "access_token" || k == "api_key" {
			return true
		}
		for _, v := range vs {
			if s.isToken(v) {
				return true
			}
		}
	}
	return strings.Contains(r.URL.RawQuery, s.token)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) *statusError {
	h := r.Header.Get("Authorization")
	if h == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="evalhost tool bridge"`)
		return &statusError{http.StatusUnauthorized, "missing Authorization header; send Authorization: Bearer <PI_TOOL_BRIDGE_TOKEN>"}
	}
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return &statusError{http.StatusForbidden, "Authorization must use the Bearer scheme: Authorization: Bearer <PI_TOOL_BRIDGE_TOKEN>"}
	}
	if !s.isToken(strings.TrimSpace(tok)) {
		return &statusError{http.StatusForbidden, "wrong bridge token; use the PI_TOOL_BRIDGE_TOKEN of this evalhost process"}
	}
	return nil
}

func (s *Server) isToken(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}

func notRunning(c Call) string {
	return fmt.Sprintf("run %q is not executing in session %q now; tools can be called only from a running cell (stale EVALHOST_RUN or PI_TOOL_BRIDGE_SESSION?)", c.Run, c.Session)
}

type result struct {
	value json.RawMessage
	err   error
}

// call runs the tool in a goroutine the Server owns, so the client is
// answered as soon as the call is abandoned even if the tool is slow to stop.
func (s *Server) call(reqCtx, runCtx context.Context, c Call) (json.RawMessage, error, *statusError) {
	ctx, cancel := context.WithCancelCause(reqCtx)
	defer cancel(nil)
	stop := context.AfterFunc(runCtx, func() { cancel(context.Cause(runCtx)) })
	defer stop()
	done := make(chan result, 1)
	s.callWG.Add(1)
	go func() {
		defer s.callWG.Done()
		v, err := s.tools.Call(ctx, c)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		if res.err == nil {
			return res.value, nil, nil
		}
		if ctx.Err() == nil {
			return nil, res.err, nil
		}
	case <-ctx.Done():
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCellEnded):
		return nil, nil, &statusError{http.StatusConflict, fmt.Sprintf("cell ended before tool %q returned; the call was abandoned", c.Name)}
	case errors.Is(cause, ErrClosed) || s.base.Err() != nil:
		return nil, nil, &statusError{http.StatusServiceUnavailable, fmt.Sprintf("tool bridge is shutting down; tool %q was abandoned", c.Name)}
	default:
		return nil, nil, &statusError{http.StatusRequestTimeout, fmt.Sprintf("client went away; tool %q was abandoned", c.Name)}
	}
}

// reply writes {"ok":true,"value":V} or {"ok":false,"error":MSG}, with the
// token scrubbed from both.
func (s *Server) reply(w http.ResponseWriter, status int, value json.RawMessage, msg string) {
	var b []byte
	if msg == "" {
		if len(value) == 0 {
			value = json.RawMessage("null")
		}
		if !json.Valid(value) {
			status, msg = http.StatusOK, "tool returned invalid JSON"
		} else {
			b = append(append([]byte(`{"ok":true,"value":`), bytes.ReplaceAll(value, []byte(s.token), []byte("[redacted]"))...), '}')
		}
	}
	if msg != "" {
		m, _ := json.Marshal(strings.ReplaceAll(msg, s.token, "[redacted]"))
		b = append(append([]byte(`{"ok":false,"error":`), m...), '}')
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
