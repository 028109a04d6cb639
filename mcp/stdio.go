package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
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
				"request of %d bytes is longer than the server's limit of %d bytes (evalhost mcp --max-line); "+
					"send less at once: split the cells, or write large text to a file and read it in a cell", p.Bytes, p.Max)}
		})
	if err != nil {
		panic(err) // the name is not a standard method's
	}
}

// RunStdio serves one client on r and w, as Run does with an IOTransport,
// but a message longer than maxLine (0: DefaultMaxLine) is answered with an
// error for its id instead of ending the connection.
func (s *Server) RunStdio(ctx context.Context, r io.Reader, w io.WriteCloser, maxLine int) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	g := &lineGuard{r: bufio.NewReaderSize(r, 64<<10), max: maxLine, logger: s.cfg.Logger}
	return s.sdk.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(g), Writer: w, MaxLineLength: maxLine + 4096})
}

// lineGuard passes lines through and replaces one longer than max by a
// lineTooLong request with the same id (or drops it when no id can be
// read from its start).
type lineGuard struct {
	r      *bufio.Reader
	max    int
	logger *slog.Logger
	line   []byte // the current line, or the first max+1 bytes of a long one
	out    []byte // what Read hands out next
	err    error
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
	var total int64
	for {
		chunk, err := g.r.ReadSlice('\n')
		total += int64(len(chunk))
		if room := g.max + 1 - len(g.line); room > 0 {
			g.line = append(g.line, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			g.err = err
		}
		break
	}
	if total <= int64(g.max) {
		g.out = g.line
		return
	}
	id, ok := idOfPrefix(g.line)
	if g.logger != nil {
		g.logger.Warn("request line over --max-line", "bytes", total, "max", g.max, "id", id)
	}
	if ok {
		g.out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"bytes":%d,"max":%d}}`+"\n", id, lineTooLong, total, g.max)
	}
}

// idOfPrefix reads a request's id (its raw JSON: a string or a number) from
// the start of a line too long to read whole. An id the cut may have
// shortened is not guessed.
func idOfPrefix(prefix []byte) (string, bool) {
	v := gjson.GetBytes(prefix, "id")
	if (v.Type != gjson.String && v.Type != gjson.Number) || v.Index <= 0 || v.Index+len(v.Raw) >= len(prefix) {
		return "", false
	}
	if !gjson.GetBytes(prefix, "method").Exists() {
		return "", false // a response to the server: there is nobody to answer
	}
	return v.Raw, true
}
