package mcp

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/evalhost/evalhost/internal/handoff"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// stdioConn is the sdk.Connection RunStdio serves the SDK on. Its reader
// takes the lines a lineGuard passes: a tools/call the fast path takes
// (fastcall.go) is run by the goroutine that read it, as serve's reader
// does (serve/reader.go), once it has handed the reading on to a goroutine
// parked after an earlier call, or to a new one; so a long cell blocks
// neither the next request nor a cancel. Every other line is decoded once
// and handed to the SDK through Read: the SDK's IOTransport decoded each
// line three times (its stream, batch and message decoders), each with a
// fresh 64 KiB buffer.
type stdioConn struct {
	s *Server
	g *lineGuard
	w *lockedWriter
	// pending holds the requests admitted and not answered; the end of input
	// waits for them until runCtx ends.
	pending *inflight
	gone    <-chan struct{} // closed once the output's reader is gone
	runCtx  context.Context
	fast    bool // the fast path is on

	ss       *sdk.ServerSession // set by start, before reading starts
	toSDK    chan lineMsg
	closed   chan struct{}
	once     sync.Once
	closeErr error

	base   context.Context // the fast calls' parent; cancelled by Close
	cancel context.CancelFunc
	// wg counts the goroutines between the dispatch of a fast call and
	// their next read (or exit); a reader blocked in Read is not counted,
	// as nothing but the input's end can end that read.
	wg    sync.WaitGroup
	mu    sync.Mutex
	calls map[string]context.CancelFunc // fast calls running, by callKey
	// acceptedMeta holds the _meta values (raw, and decoded) of calls the
	// SDK answered with a result; askedMeta those of calls it has not
	// answered yet, by callKey (fastcall.go).
	acceptedMeta map[string]sdk.Meta
	askedMeta    map[string]string
	// unanswered is why the end of input left calls unanswered (ctx's
	// error, ErrOutputGone), nil when it did not; under mu.
	unanswered error
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

// stdioTransport connects its stdioConn; like IOTransport, once.
type stdioTransport struct{ c *stdioConn }

func (t stdioTransport) Connect(context.Context) (sdk.Connection, error) { return t.c, nil }

func newStdioConn(ctx context.Context, s *Server, g *lineGuard, w *lockedWriter, pending *inflight, gone <-chan struct{}, fast bool) *stdioConn {
	c := &stdioConn{s: s, g: g, w: w, pending: pending, gone: gone, runCtx: ctx, fast: fast, toSDK: make(chan lineMsg),
		closed: make(chan struct{}), calls: map[string]context.CancelFunc{},
		acceptedMeta: map[string]sdk.Meta{}, askedMeta: map[string]string{}}
	c.base, c.cancel = context.WithCancel(context.Background())
	return c
}

// start starts reading, for the SDK's session ss.
func (c *stdioConn) start(ss *sdk.ServerSession) {
	c.ss = ss
	// The goroutine that reads a fast call runs it, having handed the
	// reading on (internal/handoff).
	go handoff.New(c.readUntilWork, c.closed, &c.wg).Read()
}

// wait returns once no goroutine runs a fast call; the connection is
// closed first, so that the parked readers exit.
func (c *stdioConn) wait() {
	_ = c.Close()
	c.wg.Wait()
}

// readUntilWork reads and routes lines until one is a fast call, whose
// work it returns (counted in wg), or reading ends (nil).
func (c *stdioConn) readUntilWork() func() {
	for {
		line, plain, err := c.g.next()
		if err != nil {
			if err == io.EOF {
				// A client that wrote its requests and closed stdin gets its
				// answers; one that died (its end of the output closed too)
				// has its calls cancelled now, not at their timeouts.
				c.setUnanswered(c.pending.wait(c.runCtx, c.gone))
			}
			c.toSDKOrClosed(lineMsg{err: err})
			return nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue // the SDK skips a blank line too
		}
		if plain && c.fast {
			if work := c.route(line); work != nil {
				return work
			}
		}
		var m lineMsg
		m.msg, m.err = decodeLine(line, plain)
		if req, ok := m.msg.(*jsonrpc.Request); ok && req.Method == "notifications/cancelled" {
			if id, ok := cancelledID(req); ok {
				c.pending.cancelled(id)
				if c.fast {
					c.cancelFast(id)
				}
			}
		}
		if !c.toSDKOrClosed(m) || m.err != nil {
			return nil
		}
	}
}

func (c *stdioConn) toSDKOrClosed(m lineMsg) bool {
	select {
	case c.toSDK <- m:
		return true
	case <-c.closed:
		return false
	}
}

// decodeLine decodes a line the guard passed, which is not blank. A plain
// request is built with gjson, which reads it in a fraction of the time
// the SDK's decoder takes.
func decodeLine(line []byte, plain bool) (jsonrpc.Message, error) {
	if !plain {
		return jsonrpc.DecodeMessage(line)
	}
	m := gjson.ParseBytes(line)
	var id any
	switch v := m.Get("id"); v.Type {
	case gjson.String:
		id = v.Str
	case gjson.Number:
		id = v.Num
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	req := &jsonrpc.Request{ID: rid, Method: m.Get("method").Str}
	if p := m.Get("params"); p.Exists() {
		req.Params = []byte(p.Raw) // a copy: the guard reuses line
	}
	return req, nil
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.toSDK:
		return m.msg, m.err
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	written := func(error) {}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		written = c.pending.answering(resp.ID)
		if c.fast {
			c.noteAnswer(resp)
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err == nil {
		_, err = c.w.Write(append(data, '\n'))
	}
	written(err)
	return err
}

// Close cancels the fast calls, as the SDK cancels its own calls when the
// connection ends, and unblocks Read.
func (c *stdioConn) Close() error {
	c.once.Do(func() {
		c.cancel()
		c.closeErr = c.w.Close()
		close(c.closed)
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) setUnanswered(err error) {
	c.mu.Lock()
	c.unanswered = err
	c.mu.Unlock()
}

// unansweredErr is why the end of input left calls unanswered, or nil.
func (c *stdioConn) unansweredErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unanswered
}
