package frames

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Reader reads frames from an NDJSON stream with bounded lines.
type Reader struct {
	br      *bufio.Reader
	maxLine int
	buf     []byte
}

// NewReader reads r; maxLine <= 0 means DefaultMaxLine.
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine}
}

// Next returns the next frame. A bad line gives a *ProtocolError and the
// reader stays usable; io.EOF (or the underlying error) ends the stream. A
// final line without a newline is still decoded. Blank lines are skipped.
func (r *Reader) Next() (Frame, error) {
	for {
		line, err := r.line()
		if err != nil {
			return Frame{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return Decode(line)
	}
}

// Line returns the next raw line without decoding it, with the same bounds.
func (r *Reader) Line() ([]byte, error) { return r.line() }

// Buffered reports whether a line has started to arrive: Next may then
// return without waiting for more input. A reader hands on together the
// frames that arrived together.
func (r *Reader) Buffered() bool { return r.br.Buffered() > 0 }

func (r *Reader) line() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > r.maxLine {
			prefix := append(r.buf, chunk...)
			tooLong := badLine(prefix, fmt.Sprintf("line longer than %d bytes", r.maxLine))
			if errors.Is(err, bufio.ErrBufferFull) {
				if derr := r.discardLine(); derr != nil && !errors.Is(derr, io.EOF) {
					return nil, derr
				}
			}
			r.buf = r.buf[:0]
			return nil, tooLong
		}
		r.buf = append(r.buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(r.buf, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(r.buf) > 0:
			return r.buf, nil
		default:
			return nil, err
		}
	}
}

func (r *Reader) discardLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}
