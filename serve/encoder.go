package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// Encoder writes evalhost's tagged NDJSON output, shared by `serve` and
// `run --json`: a request's frames tagged with its cell and request id, a
// cell_end per cell, an end per request, and any other reply. Its methods
// are safe for concurrent use: each line is built first and written under
// the lock, so lines of concurrent requests interleave but never mix.
//
// A frame's own ID is the interpreter's run id (it carries a random nonce);
// it never reaches the output: Frame writes the request id given instead.
//
// A line that is always followed at once by another of the same request (a
// cell's result, error and done come right before its cell_end; the last
// cell_end right before end) is held and written together with the next
// line: one write and one client wake-up instead of several, which is most
// of a short request's cost on a small machine. A cell's started frame is
// held too, for at most startedHold: a quick cell's frames then reach the
// client in one write. Nothing is held past the next line written, past
// startedHold, or past Flush.
type Encoder struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	held  []byte
	err   error         // the first failed write
	timer *time.Timer   // flushes a held started frame
	hold  time.Duration // startedHold (a test's may be longer)
	bound atomic.Int64  // a time.Duration: how long a write may wait, once bounded (stall.go)
}

// startedHold bounds how long a started frame waits for the lines after it.
const startedHold = time.Millisecond

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w, hold: startedHold} }

// Frame writes f with "cell" first and the request id ("" leaves it out).
func (e *Encoder) Frame(id string, cell int, f *frames.Frame) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = appendFrame(e.buf[:0], id, cell, f)
	e.buf = append(e.buf, '\n')
	if f.Type == frames.TypeStarted && len(e.held) == 0 {
		e.held = append(e.held, e.buf...)
		if e.timer == nil {
			e.timer = time.AfterFunc(e.hold, func() { _ = e.Flush() })
		} else {
			e.timer.Reset(e.hold)
		}
		return
	}
	e.writeLocked(e.buf, endsCell(f.Type))
}

// appendFrame appends f as one JSON object without a newline, with "cell"
// as its first field and id in place of the frame's own ("" leaves it out).
func appendFrame(dst []byte, id string, cell int, f *frames.Frame) []byte {
	g := *f
	g.ID = id
	dst = append(dst, `{"cell":`...)
	dst = strconv.AppendInt(dst, int64(cell), 10)
	dst = append(dst, ',')
	start := len(dst)
	dst = frames.AppendJSON(dst, &g)
	return append(dst[:start], dst[start+1:]...) // drop the frame's own "{"
}

// endsCell reports the frames a cell ends with: its cell_end follows.
func endsCell(t frames.Type) bool {
	return t == frames.TypeDone || t == frames.TypeResult || t == frames.TypeError
}

// CellEnd writes a cell's result. last says the request's end follows at
// once, so the line is held for it.
func (e *Encoder) CellEnd(id string, res sessions.CellResult, last bool) {
	c := CellEnd{Type: TypeCellEnd, ID: id, CellResult: res}
	e.appendLine(func(dst []byte) ([]byte, error) { return appendCellEnd(dst, &c) }, last)
}

// End writes a request's end; d is how long it took. It returns the
// write's error (that of a skipped write: the one that failed before).
func (e *Encoder) End(id string, res sessions.Result, d time.Duration) error {
	end := End{DurationMs: float64(d.Microseconds()) / 1000, FailedCell: res.FailedCell, ID: id,
		Status: res.Status, Type: TypeEnd}
	return e.appendLine(func(dst []byte) ([]byte, error) { return appendEnd(dst, &end) }, false)
}

// appendLine writes a line that build appends to dst (cell_end, end), as
// built does, building it straight into the held lines: no buffer of its
// own per line. It returns the write's error (nil for a line held).
func (e *Encoder) appendLine(build func(dst []byte) ([]byte, error), hold bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := build(e.held)
	if err != nil {
		// e.held is as it was: build appended past its length, if at all.
		line, _ := encodeLine(RequestError{Error: "cannot encode a reply: " + err.Error(), Type: TypeRequestError})
		return e.writeLocked(line, false)
	}
	e.held = b
	if hold {
		return nil
	}
	err = e.write(e.held)
	e.held = e.held[:0]
	e.disarm()
	return err
}

// Line writes v as one JSON line. When v cannot be encoded it writes nothing
// and returns why.
func (e *Encoder) Line(v any) error {
	b, err := encodeLine(v)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writeLocked(b, false)
	return nil
}

// Raw writes line, one JSON object and its newline that the caller built
// (and answers for), as one write between the other lines.
func (e *Encoder) Raw(line []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writeLocked(line, false)
}

// RawData writes line, one JSON object and its newline that the caller
// built, and data right after it, as one write between the other lines:
// for a protocol whose line says how many bytes follow it, as they are
// (the background process's bytes lines). data is never copied: held
// lines go out ahead of line, in the same write.
func (e *Encoder) RawData(line, data []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.held) > 0 {
		e.held = append(e.held, line...)
		line, e.held = e.held, e.held[:0] // written below, under the lock
		e.disarm()
	}
	if !e.armWrite() {
		return
	}
	bufs := net.Buffers{line, data} // one writev on a connection
	if _, err := bufs.WriteTo(e.w); err != nil && e.err == nil {
		e.err = err
	}
}

// line writes one of this package's replies. Their encoding fails only on
// a value that is not JSON (a NaN, a bad raw message); the client then gets
// a request_error naming the line instead of nothing. It returns the
// write's error.
func (e *Encoder) line(v any, hold bool) error {
	b, err := encodeLine(v)
	return e.built(b, err, hold)
}

// built writes a reply line built by encodeLine or by hand.
func (e *Encoder) built(b []byte, err error, hold bool) error {
	if err != nil {
		b, _ = encodeLine(RequestError{Error: "cannot encode a reply: " + err.Error(), Type: TypeRequestError})
		hold = false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writeLocked(b, hold)
}

// encodeLine encodes v with its newline and without HTML escaping, as
// frames.AppendJSON does: the lines go to programs and agents, for whom
// "<cell 1>" reads better than "\u003ccell 1\u003e".
func encodeLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Flush writes a held line, and returns the first write error so far.
func (e *Encoder) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.held) > 0 {
		e.write(e.held)
		e.held = e.held[:0]
		e.disarm()
	}
	return e.err
}

// writeLocked writes line, or holds it, and returns the write's error.
func (e *Encoder) writeLocked(line []byte, hold bool) error {
	switch {
	case hold:
		e.held = append(e.held, line...)
		return nil
	case len(e.held) > 0:
		e.held = append(e.held, line...)
		err := e.write(e.held)
		e.held = e.held[:0]
		e.disarm()
		return err
	default:
		return e.write(line)
	}
}

// disarm stops the started frame's timer once nothing is held: left armed,
// it would wake the process startedHold after every quick cell for nothing.
func (e *Encoder) disarm() {
	if e.timer != nil {
		e.timer.Stop()
	}
}

// write writes b and returns its error; a write skipped (armWrite) returns
// the error of the one that failed before.
func (e *Encoder) write(b []byte) error {
	if !e.armWrite() {
		return e.err
	}
	_, err := e.w.Write(b)
	if err != nil && e.err == nil {
		e.err = err
	}
	return err
}
