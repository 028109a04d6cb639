package mcp

import (
	"context"
	"errors"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// errSessionEnded is the cause a call is cancelled with when its client
// ended the MCP session it came on.
var errSessionEnded = errors.New("the client ended its MCP session")

// sessionCalls holds the cancels of the tool calls in flight on each MCP
// session of the HTTP transport, by its Mcp-Session-Id, so that a client
// ending its session (DELETE) cancels them: the SDK closes the session only
// once its calls have returned, so a cell ran on to its own end for a
// client that was gone, and the DELETE waited for it. Stdio sessions have
// no id and are not held: the end of their connection cancels their calls.
type sessionCalls struct {
	mu     sync.Mutex
	next   uint64
	calls  map[string]map[uint64]context.CancelCauseFunc
	ending map[string]int // sessions whose DELETE is being served
}

func newSessionCalls() *sessionCalls {
	return &sessionCalls{calls: map[string]map[uint64]context.CancelCauseFunc{}, ending: map[string]int{}}
}

// middleware holds every tools/call of a session with an id for the time
// it runs.
func (c *sessionCalls) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if !ok || ss.ID() == "" {
			return next(ctx, method, req)
		}
		ctx, release := c.hold(ctx, ss.ID())
		defer release()
		return next(ctx, method, req)
	}
}

// hold registers a call of session id; a call that arrives while the
// session's DELETE is served is cancelled at once.
func (c *sessionCalls) hold(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	c.next++
	n := c.next
	if c.calls[id] == nil {
		c.calls[id] = map[uint64]context.CancelCauseFunc{}
	}
	c.calls[id][n] = cancel
	ending := c.ending[id] > 0
	c.mu.Unlock()
	if ending {
		cancel(errSessionEnded)
	}
	return ctx, func() {
		c.mu.Lock()
		delete(c.calls[id], n)
		if len(c.calls[id]) == 0 {
			delete(c.calls, id)
		}
		c.mu.Unlock()
		cancel(nil)
	}
}

// end cancels the calls of session id while its DELETE is served; done
// is called once the SDK has served it (the session is gone then, and a
// later request with its id is refused by the SDK).
func (c *sessionCalls) end(id string) (done func()) {
	c.mu.Lock()
	c.ending[id]++
	var cancels []context.CancelCauseFunc
	for _, cancel := range c.calls[id] {
		cancels = append(cancels, cancel)
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel(errSessionEnded)
	}
	return func() {
		c.mu.Lock()
		if c.ending[id]--; c.ending[id] <= 0 {
			delete(c.ending, id)
		}
		c.mu.Unlock()
	}
}

// serveDELETE passes a DELETE (the client ending its session) to the SDK
// once the session's calls are cancelled.
func (c *sessionCalls) serveDELETE(inner http.Handler, w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		defer c.end(id)()
	}
	inner.ServeHTTP(w, r)
}
