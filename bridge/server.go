package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// Environment variable names the interpreter sees.
const (
	EnvURL     = "PI_TOOL_BRIDGE_URL"
	EnvToken   = "PI_TOOL_BRIDGE_TOKEN"
	EnvSession = "PI_TOOL_BRIDGE_SESSION"
	EnvRun     = "EVALHOST_RUN" // set per cell by the runner
	// EnvNoTools, set to "1" by a host that has no tools and so no Server:
	// a tool call fails at once, saying so.
	EnvNoTools = "PI_TOOL_BRIDGE_NONE"
)

// Path is the only endpoint.
const Path = "/v1/tool"

// ErrClosed is returned by Env after Close.
var ErrClosed = errors.New("tool bridge is closed")

// Call is one tool call made by a running cell.
type Call struct {
	Session, Run, Name string
	Args               json.RawMessage // a JSON object, "{}" when the caller sent none
	// Request and Cell name the run's request and cell, as given to
	// Server.TrackRun (empty and 0 after RunHook).
	Request string
	Cell    int
}

// Tools executes tool calls. An error's message goes back to Python as
// {"ok":false,"error":msg}. Call must return once ctx is done.
type Tools interface {
	Call(ctx context.Context, c Call) (json.RawMessage, error)
}

// ToolsFunc adapts a function to Tools.
type ToolsFunc func(ctx context.Context, c Call) (json.RawMessage, error)

// Call calls f.
func (f ToolsFunc) Call(ctx context.Context, c Call) (json.RawMessage, error) { return f(ctx, c) }

// Options bound the server. Zero values take the defaults.
type Options struct {
	MaxBody           int64         // request body limit; default 1 MiB
	ReadHeaderTimeout time.Duration // default 5 s
	ReadTimeout       time.Duration // whole request incl. body; default 30 s
	IdleTimeout       time.Duration // keep-alive idle; default 2 min
	ShutdownTimeout   time.Duration // Close waits this long for handlers before cutting connections; default 5 s
	// MaxConns bounds the connections open at once (default 1024); more
	// wait in the kernel's backlog. Any local user can connect to a
	// loopback port: unbounded, a flood ran the whole process out of file
	// descriptors, and interpreters could not start.
	MaxConns int
}

func (o *Options) fill() {
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 5 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 5 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 1024
	}
}

// Server is the tool bridge. Its methods are safe for concurrent use.
type Server struct {
	tools Tools
	opts  Options
	token string
	runs  runs

	base     context.Context // cancelled by Close: every call ends
	shutdown context.CancelCauseFunc

	mu     sync.Mutex
	srv    *http.Server
	url    string
	closed bool

	serveWG sync.WaitGroup // the Serve goroutine
	connWG  sync.WaitGroup // connection goroutines, via ConnState
	callWG  sync.WaitGroup // Tools.Call goroutines
}

// New makes a Server calling tools. Nothing listens until Env.
func New(tools Tools, o Options) *Server {
	o.fill()
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	base, cancel := context.WithCancelCause(context.Background())
	return &Server{tools: tools, opts: o, token: hex.EncodeToString(b[:]),
		base: base, shutdown: cancel, runs: runs{m: map[runKey]*runState{}}}
}

// Env starts the server on first call and returns PI_TOOL_BRIDGE_URL and
// PI_TOOL_BRIDGE_TOKEN for the interpreters' environment.
func (s *Server) Env() (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.srv == nil {
		if err := s.start(); err != nil {
			return nil, err
		}
	}
	return map[string]string{EnvURL: s.url, EnvToken: s.token}, nil
}

// start listens and serves; s.mu is held.
func (s *Server) start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("tool bridge: listen on 127.0.0.1: %w", err)
	}
	ln = netutil.LimitListener(ln, s.opts.MaxConns)
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          discardLog,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ConnState:         s.connState,
	}
	s.url = "http://" + ln.Addr().String()
	s.serveWG.Add(1)
	go func() {
		defer s.serveWG.Done()
		s.srv.Serve(ln) // returns ErrServerClosed after Shutdown/Close
	}()
	return nil
}

// connState counts connection goroutines so Close can wait for them. StateNew
// is reported by the Serve goroutine before the connection's goroutine starts,
// so no Add races with Close's Wait once Serve has returned.
func (s *Server) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.connWG.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.connWG.Done()
	}
}

// Close abandons every call in flight, stops the server, closes its Tools
// when they are an io.Closer, and returns when every goroutine it started
// is done. Safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv := s.srv
	s.mu.Unlock()
	s.shutdown(ErrClosed)
	s.runs.closeAll()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
		if srv.Shutdown(ctx) != nil {
			err = srv.Close()
		}
		cancel()
		s.serveWG.Wait()
		s.connWG.Wait()
	}
	s.callWG.Wait()
	if c, ok := s.tools.(io.Closer); ok {
		_ = c.Close() // what the tools left running (CommandTools)
	}
	if err != nil {
		return fmt.Errorf("tool bridge: close: %w", err)
	}
	return nil
}

// String describes the server without its token, so printing a Server (even
// with %+v) cannot leak it.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.url == "" {
		return "tool bridge (not started)"
	}
	return "tool bridge at " + s.url
}

// GoString is String, for %#v.
func (s *Server) GoString() string { return s.String() }
