package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// The fast path is hand-written JSON-RPC handling of the kind the SDK
// does, kept for speed alone: the SDK spent ~100 µs of a warm eval's
// round trip on its transport (three decodes, a channel, two new
// goroutines per call, its encoder), over twice serve's whole round trip.
// It takes only the shape of call that needs nothing of the SDK but the
// tool's handler:
//
//   - a plain request (plainRequest) with method tools/call and a string
//     or number id, whose params hold "name" (one of the tools addTool
//     registered), "arguments" and at most "_meta";
//   - on a session the SDK initialized (initialize, or server/discover);
//   - without _meta, or with the per-request protocol fields of MCP
//     2026-07-28 (and no progress token) byte for byte as in an earlier
//     call the SDK answered with a result on this connection: whether the
//     SDK takes those fields depends on them alone, so the SDK has checked
//     them, and the fast path need not repeat its checks;
//   - whose id is not that of a call the SDK runs.
//
// It calls the handler the SDK would (the one addTool registered) with the
// request the SDK would build, marks the result as the SDK does (resultType
// "complete" on a session initialized at 2026-07-28 or later, serverInfo in
// _meta when the request carried the protocol fields), and encodes it as
// the SDK does. A notifications/cancelled for a call it runs cancels that
// call. Every other line goes to the SDK; fastcall_test.go checks that
// both answer the same.

// firstPerRequestProtocol is the MCP version whose requests may carry
// their protocol fields in _meta (the SDK then adds serverInfo to the
// result's), and on whose sessions the SDK marks results with resultType.
const firstPerRequestProtocol = "2026-07-28"

// maxAcceptedMeta bounds the _meta values remembered as the SDK's: a client
// sends one (its version, info and capabilities), or a few.
const maxAcceptedMeta = 8

// route returns the work of a plain request line the fast path answers
// (to run once the reading is handed on); nil for one the SDK takes.
func (c *stdioConn) route(line []byte) (work func()) {
	m := gjson.ParseBytes(line)
	if m.Get("method").Str != "tools/call" {
		return nil
	}
	return c.fastCall(m)
}

// fastCall returns the work of a call the fast path takes, registered as
// running; nil for one the SDK takes.
func (c *stdioConn) fastCall(m gjson.Result) (work func()) {
	idv := m.Get("id")
	if idv.Type != gjson.String && idv.Type != gjson.Number {
		return nil
	}
	p, ok := callParams(m.Get("params"))
	if !ok {
		return nil
	}
	h := c.s.handlers[p.name]
	ip := c.ss.InitializeParams()
	if h == nil || ip == nil {
		return nil // the SDK answers an unknown tool, or before initialize
	}
	id, err := jsonrpc.MakeID(idv.Value())
	if err != nil {
		return nil
	}
	key := callKey(id)
	meta, ok := c.metaChecked(p.meta, key)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithCancel(c.base)
	c.mu.Lock()
	// The guard answered a request with the id of one not answered yet
	// (inflight.admit), and a fast call's id is off the list before its
	// answer is noted: no call with this id runs.
	c.calls[key] = cancel
	c.mu.Unlock()
	params := &sdk.CallToolParamsRaw{Name: p.name, Arguments: p.args, Meta: meta}
	c.wg.Add(1)
	c.s.fastCalls.Add(1)
	call := fastCallRun{key: key, id: id, h: h, req: &sdk.CallToolRequest{Session: c.ss, Params: params},
		serverInfo: meta != nil, complete: ip.ProtocolVersion >= firstPerRequestProtocol}
	return func() { c.runCall(ctx, call) }
}

// fastCallRun is what runCall needs of a call.
type fastCallRun struct {
	key        string
	id         jsonrpc.ID
	h          sdk.ToolHandler
	req        *sdk.CallToolRequest
	serverInfo bool // add the server's Implementation to the result's _meta
	complete   bool // mark the result resultType "complete"
}

// metaChecked reports whether a call (callKey key) with this _meta (raw
// JSON; nil when absent) may take the fast path, and its meta decoded when it makes it a
// request of the per-request protocol (nil otherwise). A call with
// protocol fields not yet seen is left to the SDK, and its answer noted
// (noteAnswer).
func (c *stdioConn) metaChecked(raw json.RawMessage, key string) (meta sdk.Meta, ok bool) {
	if raw == nil {
		return nil, true
	}
	c.mu.Lock()
	accepted := c.acceptedMeta[string(raw)]
	c.mu.Unlock()
	if accepted != nil {
		// A copy, as the SDK decodes one per call; the values are shared,
		// and no handler changes them.
		return maps.Clone(accepted), true
	}
	mv := gjson.ParseBytes(raw)
	if !mv.IsObject() || mv.Get("progressToken").Exists() || mv.Get(protocolVersionPath).Str < firstPerRequestProtocol {
		return nil, false
	}
	c.mu.Lock()
	if len(c.acceptedMeta) < maxAcceptedMeta {
		c.askedMeta[key] = string(raw)
	}
	c.mu.Unlock()
	return nil, false
}

// protocolVersionPath is the gjson path of the protocol version in _meta.
var protocolVersionPath = gjson.Escape(sdk.MetaKeyProtocolVersion)

// callKey names a call's id as the SDK compares ids: decoded (jsonrpc.MakeID
// makes a number an int64), so 1, 1.0 and 1.5 are one id. "" for none.
func callKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return intKey(v)
	case string:
		return stringKey(v)
	}
	return ""
}

func intKey(n int64) string     { return "n" + strconv.FormatInt(n, 10) }
func stringKey(s string) string { return "s" + s }

// noteAnswer notes the SDK's response to a call whose _meta the fast path
// waits to see checked: a result means the SDK took the meta.
func (c *stdioConn) noteAnswer(resp *jsonrpc.Response) {
	key := callKey(resp.ID)
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	meta, ok := c.askedMeta[key]
	if !ok {
		return
	}
	delete(c.askedMeta, key)
	var decoded sdk.Meta
	if resp.Error == nil && len(c.acceptedMeta) < maxAcceptedMeta && json.Unmarshal([]byte(meta), &decoded) == nil {
		c.acceptedMeta[meta] = decoded
	}
}

func (c *stdioConn) dropCall(key string) {
	c.mu.Lock()
	cancel := c.calls[key]
	delete(c.calls, key)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// toolCall is a tools/call's params: the tool's name, its arguments and
// _meta (raw JSON, copies; nil when absent).
type toolCall struct {
	name       string
	args, meta json.RawMessage
}

// callParams reads a tools/call's params when they hold only the tool's
// name (unescaped), its arguments and _meta, each once, keys spelled
// plainly.
func callParams(p gjson.Result) (toolCall, bool) {
	var tc toolCall
	if !p.IsObject() {
		return tc, false
	}
	var seenName bool
	ok := true
	p.ForEach(func(k, v gjson.Result) bool {
		switch {
		case len(k.Raw) != len(k.Str)+2: // escaped
			ok = false
		case k.Str == "name" && !seenName && v.Type == gjson.String && len(v.Raw) == len(v.Str)+2:
			// Unescaped: gjson and the SDK's decoder read some escapes
			// (a lone surrogate) differently, and no tool's name needs one.
			seenName, tc.name = true, v.Str
		case k.Str == "arguments" && tc.args == nil:
			tc.args = json.RawMessage(v.Raw)
		case k.Str == "_meta" && tc.meta == nil:
			tc.meta = json.RawMessage(v.Raw)
		default:
			ok = false
		}
		return ok
	})
	return tc, ok && seenName
}

// runCall runs a fast call and writes its response, as the SDK's
// ServerSession, callTool and jsonrpc2 connection do.
func (c *stdioConn) runCall(ctx context.Context, call fastCallRun) {
	res, err := call.h(ctx, call.req)
	if err == nil && res != nil && res.Content == nil {
		r := *res
		r.Content = []sdk.Content{} // the SDK's: no "content": null
		res = &r
	}
	resp := &jsonrpc.Response{ID: call.id, Error: err}
	if err == nil {
		if call.serverInfo && res.Meta[sdk.MetaKeyServerInfo] == nil {
			if res.Meta == nil {
				res.Meta = sdk.Meta{}
			}
			res.Meta[sdk.MetaKeyServerInfo] = c.s.impl
		}
		resp.Result, err = marshalResult(res, call.complete)
		if err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcp: encoding the result: " + err.Error()}
		}
	}
	// Off the list before the answer: the client may reuse the id then.
	c.dropCall(call.key)
	c.writeResponse(resp)
}

func (c *stdioConn) writeResponse(resp *jsonrpc.Response) {
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return // cannot be: the result is JSON already
	}
	// The end of input waits until written: before, it could see the
	// answer noted, close the connection, and leave it unwritten.
	written := c.pending.answering(resp.ID)
	select {
	case <-c.closed: // as the SDK writes nothing once it shut down
		written(io.ErrClosedPipe)
	default:
		_, err = c.w.Write(append(data, '\n'))
		written(err)
	}
}

// marshalResult encodes as the SDK's jsonrpc2 does: no HTML escaping. A
// complete result gets the resultType field the SDK's encoder writes last
// (CallToolResult's is unexported).
func marshalResult(res *sdk.CallToolResult, complete bool) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	data := bytes.TrimRight(buf.Bytes(), "\n")
	if complete {
		data = append(data[:len(data)-1], `,"resultType":"complete"}`...)
	}
	return data, nil
}

// cancelledID is the id of the request a notifications/cancelled names,
// read as the SDK's canceller reads it.
func cancelledID(req *jsonrpc.Request) (jsonrpc.ID, bool) {
	var p sdk.CancelledParams
	if json.Unmarshal(req.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil
}

// cancelFast cancels the fast call a notifications/cancelled (any line
// the SDK gets) names (cancelledID); the SDK gets the line too, and finds
// no call of its own to cancel.
func (c *stdioConn) cancelFast(id jsonrpc.ID) {
	c.mu.Lock()
	cancel := c.calls[callKey(id)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
