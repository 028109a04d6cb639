package mcp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotLoopback is wrapped by ListenLoopback for an address another
// machine could reach.
var ErrNotLoopback = errors.New("not a loopback address")

// ErrWeakToken is returned by HTTPHandler for a token too short to guess
// only with great effort.
var ErrWeakToken = errors.New("bearer token shorter than 16 characters")

// NewToken returns 32 random bytes as 64 hex digits.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+ crypto/rand)
	return hex.EncodeToString(b[:])
}

// ListenLoopback listens on addr ("127.0.0.1:8765", "[::1]:0",
// "localhost:0") and refuses a host that is not loopback: the server runs
// code, so only this machine may reach it.
func ListenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want HOST:PORT such as 127.0.0.1:8765: %w", addr, err)
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addr[strings.LastIndex(addr, ":")+1:])
	} else if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--http %q: %w; use 127.0.0.1, [::1] or localhost (evalhost runs code for whoever reaches it)", addr, ErrNotLoopback)
	}
	return net.Listen("tcp", addr)
}

// HTTPHandler serves the streamable-HTTP transport to clients that send
// "Authorization: Bearer <token>"; others get 401. A request from a web
// page of another origin (an Origin header that is not the server's own)
// gets 403, as the MCP spec asks of local servers; clients that are not
// browsers send no Origin. The SDK refuses a Host that is not loopback.
func (s *Server) HTTPHandler(token string) (http.Handler, error) {
	if len(token) < 16 {
		return nil, ErrWeakToken
	}
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: maxBody, Logger: s.cfg.Logger})
	want := []byte("Bearer " + token)
	idle := s.idleSessions()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin, ok := r.Header["Origin"]; ok && !sameOrigin(origin, r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: a request from the web page %q; evalhost mcp takes requests only from clients that are not browsers, or from its own origin", strings.Join(origin, ", ")), http.StatusForbidden)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="evalhost"`)
			msg := "missing Authorization: Bearer <token>; evalhost mcp printed the token to its stderr as it started"
			if len(got) > 0 {
				msg = "wrong bearer token; use the one evalhost mcp printed to its stderr (or gave with --token)"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("Mcp-Session-Id")
		release, ok := idle.begin(id)
		if !ok {
			idle.notFound(w)
			return
		}
		defer release()
		if guardBody(w, r, s.cfg.Logger) {
			return
		}
		if r.Method == http.MethodDelete {
			s.httpCalls.serveDELETE(inner, w, r)
			idle.forget(id)
			return
		}
		inner.ServeHTTP(w, r)
		if id == "" {
			idle.started(w.Header().Get("Mcp-Session-Id"))
		}
	}), nil
}

// idleSessions ends the handler's MCP sessions that stay idle for
// Config.HTTPSessionTimeout (httpidle.go); nil when they never end.
func (s *Server) idleSessions() *idleSessions {
	if s.cfg.HTTPSessionTimeout < 0 {
		return nil
	}
	return newIdleSessions(s.cfg.HTTPSessionTimeout, s.hasSession, s.endIdleSession)
}

// hasSession reports whether the SDK holds an MCP session with this id.
func (s *Server) hasSession(id string) bool {
	for ss := range s.sdk.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// endIdleSession ends an idle MCP session as a DELETE does: its calls in
// flight are cancelled, then the SDK closes it (and answers 404 to its id
// from then on). Its interpreter sessions are left as a DELETE leaves them:
// they are every client's, and close after the registry's idle timeout.
func (s *Server) endIdleSession(id string) {
	done := s.httpCalls.end(id)
	for ss := range s.sdk.Sessions() {
		if ss.ID() == id {
			ss.Close()
		}
	}
	done()
	if s.cfg.Logger != nil {
		s.cfg.Logger.Info("mcp: HTTP session ended: idle", "session", id, "timeout", s.cfg.HTTPSessionTimeout)
	}
	if s.httpExpired != nil {
		s.httpExpired(id)
	}
}

// sameOrigin reports whether the Origin header's values name the server
// itself (http://HOST where HOST is the request's Host): a page of any other
// origin, another port of this machine included, is not to drive it.
func sameOrigin(origin []string, host string) bool {
	if len(origin) != 1 {
		return false
	}
	u, err := url.Parse(origin[0])
	return err == nil && u.Scheme == "http" && u.Host != "" && strings.EqualFold(u.Host, host) && u.Path == ""
}
