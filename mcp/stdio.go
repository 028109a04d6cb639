package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/internal/readergone"
)

// DefaultMaxLine is the longest message RunStdio accepts, in bytes.
const DefaultMaxLine = 16 << 20

// lineTooLong is the method an over-long request is turned into, so that
// the client gets an error for its id and the connection lives on: the
// SDK's own reader ends the connection at its line limit.
const lineTooLong = "evalhost/line_too_long"

type lineTooLongParams struct {
	sdk.ParamsBase
	Bytes int64 `json:"bytes"`
	Max   int   `json:"max"`
}

func (s *Server) addLineGuard() {
	err := sdk.AddReceivingCustomMethod(s.sdk, lineTooLong,
		func(_ context.Context, _ *sdk.ServerSession, p *lineTooLongParams) (*sdk.ResultBase, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
				"request of %d bytes is longer than the server's limit of %s (evalhost mcp --max-line); "+
					"send less at once: split the cells, or write large text to a file and read it in a cell", p.Bytes, plural.Of(p.Max, "byte"))}
		})
	if err != nil {
		panic(err) // the name is not a standard method's
	}
}

// ErrOutputGone is returned by RunStdio when the reader of its output
// left (the client closed its end, or died) with calls unanswered: they
// were cancelled, their answers having nowhere to go (or an answer's
// write failed as the reader left).
var ErrOutputGone = errors.New("mcp: the output's reader is gone: the calls still running were cancelled, unanswered")

// RunStdio serves one client on r and w, as Run does with an IOTransport,
// but a message longer than maxLine (0: DefaultMaxLine) is answered with an
// error for its id instead of ending the connection, the end of r ends the
// connection only once every request read was answered (or ctx ended), and
// tools/call requests in the plain shape are answered by the fast path
// (fastcall.go) instead of the SDK's JSON-RPC machinery. The reader of w
// leaving (a pipe or socket, internal/readergone; or a write's EPIPE)
// ends the connection too, r open or not, as nothing more can be answered.
// It returns nil at the end of r once every call was answered, and when
// the reader of w left with every answer written (a client that read them
// and closed both ends, in either order); ErrOutputGone when the reader
// of w left before every answer was written; and ctx's error when ctx
// ended it.
func (s *Server) RunStdio(ctx context.Context, r io.Reader, w io.WriteCloser, maxLine int) error {
	return s.runStdio(ctx, r, w, maxLine, true)
}

// runStdio is RunStdio with the fast path on or off (tests compare them).
func (s *Server) runStdio(ctx context.Context, r io.Reader, w io.WriteCloser, maxLine int, fast bool) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	pending := newInflight()
	watch := readergone.Watch(w)
	defer watch.Stop()
	lw := &lockedWriter{w: w, watch: watch}
	g := &lineGuard{r: bufio.NewReaderSize(r, 64<<10), max: maxLine, logger: s.cfg.Logger, answer: lw,
		admit: pending.admit, replied: pending.replied, ended: make(chan struct{})}
	c := newStdioConn(ctx, s, g, lw, pending, watch.Gone(), fast)
	// Run is not used: it logs a cancelled ctx, which is how a requested
	// shutdown (SIGTERM) ends the server, as level=ERROR "server run
	// cancelled", and an ended connection twice.
	ss, err := s.sdk.Connect(ctx, stdioTransport{c}, nil)
	if err != nil {
		return fmt.Errorf("mcp: connect: %w", err)
	}
	c.start(ss)
	defer c.wait()
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		// The connection first: its end cancels the SDK's calls in flight
		// (as the input's end does), which ss.Close alone waits for, up to
		// a cell's timeout.
		_ = c.Close()
		_ = ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		if err == nil {
			// The end of input may have cut its wait short: the calls
			// were cancelled, not answered (its ctx's end may have lost
			// the race to ended above).
			err = c.unansweredErr()
		}
		return err
	case <-watch.Gone():
		// Nobody can read an answer any more, stdin open or not: the
		// connection ends once the answers being written are, and the
		// verdict is whether any was lost. The end of input may be
		// waiting too, and comes to the same one.
		readSent(ctx, r, pending, g.ended)
		err := pending.wait(ctx, watch.Gone())
		_ = c.Close()
		_ = ss.Close()
		<-ended
		return err
	}
}

// readSent reads, once the reader of the output is gone, the requests the
// client had sent by then, when r can tell (its ReadSent, as
// internal/sentinput's Input has): each counts as unanswered and is not
// run (inflight.readingSent). Without it the verdict would go by whether
// the reader or the watch of the output woke first, and a client that sent
// a call and closed both ends was told, one time in a few, that nothing
// was lost. ended is closed once the reading ended.
func readSent(ctx context.Context, r io.Reader, pending *inflight, ended <-chan struct{}) {
	sr, ok := r.(interface{ ReadSent() bool })
	if !ok {
		return
	}
	pending.readingSent()
	if !sr.ReadSent() {
		return
	}
	select {
	case <-ended:
	case <-ctx.Done():
	}
}

// lockedWriter lets the lineGuard and the fast path write a line the SDK
// never sees between the SDK's own messages, each written in one call.
// A write after Close (a cancelled call ending after a signal) fails
// without reaching w, whose descriptor may be closed or reused by then.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.WriteCloser
	watch   *readergone.Watcher // told of each write's error (EPIPE: the reader is gone)
	closing atomic.Bool
	once    sync.Once
	err     error
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing.Load() {
		return 0, io.ErrClosedPipe
	}
	n, err := l.w.Write(p)
	if l.watch != nil {
		l.watch.NoteWrite(err)
	}
	return n, err
}

// Close closes w once; later calls return the first one's result. It does
// not wait for a write under way: w's Close may be what ends it (a write
// to a client that stopped reading, cmd/evalhost's stdout), so it must be
// safe beside a Write, as an *os.File's is.
func (l *lockedWriter) Close() error {
	l.once.Do(func() {
		l.closing.Store(true)
		l.err = l.w.Close()
	})
	return l.err
}

// lineGuard passes lines through and replaces one longer than max by a
// lineTooLong request with the same id, read wherever it is in the line
// (memberScan), or drops it when it has none that can be read. A line that is not a JSON-RPC message (or a batch
// of them) is answered on answer with a JSON-RPC error and dropped: the
// SDK ends the whole connection, and with it every session's state, at
// the first line it cannot decode.
type lineGuard struct {
	r      *bufio.Reader
	max    int
	logger *slog.Logger
	answer io.Writer
	// admit sees each line before it is passed on, and returns the reply
	// to write instead, if any (inflight.admit; nil in tests of lines
	// alone). plain: the line is a plainRequest.
	admit func(line []byte, plain bool) []byte
	// replied is told how the write of each of the guard's own answers
	// ended (inflight.replied: one that failed is an answer lost, as serve
	// counts its request_error's; nil in tests of lines alone).
	replied func(error)
	line    []byte // the current line (empty for one longer than max)
	out     []byte // what Read or next hands out next
	plain   bool   // out is a plainRequest
	err     error
	ended   chan struct{} // closed once err is set (nil: not told)
}

// fail ends the reading with err, the first error only.
func (g *lineGuard) fail(err error) {
	if g.err != nil {
		return
	}
	g.err = err
	if g.ended != nil {
		close(g.ended)
	}
}

// next returns the next line to pass on (a blank one included) and
// whether it is a plainRequest; the line is valid until the next call.
func (g *lineGuard) next() ([]byte, bool, error) {
	for len(g.out) == 0 {
		if g.err != nil {
			return nil, false, g.err
		}
		g.fill()
	}
	line := g.out
	g.out = nil
	return line, g.plain, nil
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		g.fill()
	}
	n := copy(p, g.out)
	g.out = g.out[n:]
	return n, nil
}

func (g *lineGuard) fill() {
	g.line = g.line[:0]
	g.plain = false
	var total int64
	var long *memberScan // once the line is longer than max: its id, wherever it is
	for {
		chunk, err := g.r.ReadSlice('\n')
		total += int64(len(chunk))
		switch {
		case long != nil:
			long.feed(chunk)
		case total > int64(g.max):
			long = &memberScan{}
			long.feed(g.line)
			long.feed(chunk)
			g.line = g.line[:0]
		default:
			g.line = append(g.line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			g.fail(err)
		}
		break
	}
	if total <= int64(g.max) {
		reply, plain := checkMessage(g.line)
		if reply != nil {
			if g.logger != nil {
				g.logger.Warn("request line is not a JSON-RPC message", "bytes", total)
			}
			g.reply(reply)
			return
		}
		if g.admit != nil {
			if reply := g.admit(g.line, plain); reply != nil {
				g.reply(reply)
				return
			}
		}
		g.out, g.plain = g.line, plain
		return
	}
	id, ok := long.request()
	if g.logger != nil {
		g.logger.Warn("request line over --max-line", "bytes", total, "max", g.max, "id", id)
	}
	if ok {
		g.out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"bytes":%d,"max":%d}}`+"\n", id, lineTooLong, total, g.max)
		if g.admit != nil {
			if reply := g.admit(g.out, false); reply != nil {
				g.out = nil
				g.reply(reply)
			}
		}
	}
}

// reply writes the guard's own answer to a line it does not pass on
// (none when msg is empty).
func (g *lineGuard) reply(msg []byte) {
	if len(msg) == 0 {
		return
	}
	_, err := g.answer.Write(msg)
	if g.replied != nil {
		g.replied(err)
	}
	if err != nil {
		g.fail(err)
	}
}

// checkMessage returns the error response for a line the SDK could not
// decode or would end the connection for (nil when it can take it; empty
// when the line is dropped unanswered): a parse error for what is not one
// JSON value, an invalid request for JSON that is no JSON-RPC message or
// nests deeper than the SDK reads. A blank line is let through; the SDK
// skips it. plain reports a line that is a plainRequest.
func checkMessage(line []byte) (reply []byte, plain bool) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, false
	}
	// Depth comes before validity: past encoding/json's own bound (10000)
	// json.Valid cannot tell deep JSON from no JSON, and every line deeper
	// than the SDK reads is answered alike, as an over-long one is.
	if nestsDeeper(trimmed, maxDepth) {
		return invalidMessage(trimmed, fmt.Sprintf("invalid request: the message nests arrays and objects more than %d deep, "+
			"deeper than the server reads; send flatter arguments (deep data can go in as a JSON string)", maxDepth)), false
	}
	if !json.Valid(trimmed) {
		return errorResponse("null", jsonrpc.CodeParseError,
			"parse error: the line is not one JSON value; send each JSON-RPC message as one line of JSON"), false
	}
	if trimmed[0] != '[' {
		if plainRequest(trimmed) {
			return nil, true
		}
		if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
			return invalidMessage(trimmed, "invalid request: "+err.Error()), false
		}
		return nil, false
	}
	// The SDK ends the connection at a batch once MCP 2025-06-18, which
	// removed batches, is in use: refuse every batch, as no current client
	// sends one.
	return errorResponse("null", jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported "+
		"(MCP 2025-06-18 removed them); send each message as a line of its own"), false
}

// invalidMessage is the invalid-request error for msg, under its id when
// one can be read; a response (no method; a result or an error) is dropped
// instead (empty), lest two peers answer each other for ever, and so is a
// notification, which is never answered (an id-null error would end a Go
// SDK client's connection, and there is no call to fail).
func invalidMessage(msg []byte, text string) []byte {
	m := gjson.ParseBytes(msg)
	if !m.Get("method").Exists() && (m.Get("result").Exists() || m.Get("error").Exists()) || isNotification(m) {
		return []byte{}
	}
	return errorResponse(idOf(msg), jsonrpc.CodeInvalidRequest, text)
}

// isNotification reports whether m, a JSON object, is a notification: a
// method and no id, or id null on a notifications/… method, as the SDK
// reads it.
func isNotification(m gjson.Result) bool {
	method, id := m.Get("method"), m.Get("id")
	return method.Type == gjson.String && (!id.Exists() || id.Type == gjson.Null && strings.HasPrefix(method.Str, "notifications/"))
}

// maxDepth is the deepest nesting of arrays and objects the SDK decodes
// (its internal/json defaultMaxDepth; TestMaxDepthIsTheSDKs checks it).
// RFC 8259 lets a parser bound the depth, so a deeper line is still JSON:
// it is refused with the request's id, which answers a Go SDK client's
// call; an id-null error would end that client's connection.
const maxDepth = 1000

// nestsDeeper reports whether msg nests arrays and objects more than max
// deep, counted as the SDK counts them (brackets outside strings); on
// valid JSON that is the depth. Without more than max brackets it cannot,
// which the hot path learns from a count alone.
func nestsDeeper(msg []byte, max int) bool {
	if bytes.Count(msg, []byte("{"))+bytes.Count(msg, []byte("[")) <= max {
		return false
	}
	depth, inString, escaped := 0, false, false
	for _, b := range msg {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > max {
				return true
			}
		case (b == '}' || b == ']') && depth > 0:
			depth--
		}
	}
	return false
}

// idOf is a message's id as raw JSON when it is a string or a number,
// else null.
func idOf(msg []byte) string {
	if v := gjson.GetBytes(msg, "id"); v.Type == gjson.String || v.Type == gjson.Number {
		return v.Raw
	}
	return "null"
}

func errorResponse(id string, code int64, msg string) []byte {
	m, _ := json.Marshal(msg)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, code, m)
}

// plainRequest reports whether msg, valid JSON, is a request or notification
// in the plain shape every client sends, which the SDK's decoder takes:
// only the keys jsonrpc "2.0", id (string, number or null), method (a
// string) and params, once each, unescaped; valid UTF-8; shallow enough.
// It is the fast path of checkMessage: jsonrpc.DecodeMessage, which
// decides the rest, costs ~30 µs and 64 KiB a line, as much as the
// SDK's own decoding of it. false only means "ask the decoder".
func plainRequest(msg []byte) bool {
	if msg[0] != '{' || bytes.Count(msg, []byte("{"))+bytes.Count(msg, []byte("[")) > maxPlainDepth || !utf8.Valid(msg) {
		return false
	}
	var seen [4]bool // jsonrpc, id, method, params
	ok := true
	gjson.ParseBytes(msg).ForEach(func(k, v gjson.Result) bool {
		if len(k.Raw) != len(k.Str)+2 { // escaped: leave it to the decoder
			ok = false
			return false
		}
		i := slices.Index([]string{"jsonrpc", "id", "method", "params"}, k.Str)
		if i < 0 || seen[i] {
			ok = false
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			ok = v.Type == gjson.String && v.Str == "2.0"
		case 1:
			ok = v.Type == gjson.String || v.Type == gjson.Null || v.Type == gjson.Number && finiteNumber(v.Raw)
		case 2:
			ok = v.Type == gjson.String
		}
		return ok
	})
	return ok && seen[0] && seen[2]
}

// maxPlainDepth bounds the brackets of a plainRequest well under maxDepth.
const maxPlainDepth = 500

func finiteNumber(raw string) bool {
	f, err := strconv.ParseFloat(raw, 64)
	return err == nil && !math.IsInf(f, 0)
}
