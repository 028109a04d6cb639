package streamsink

import (
	"encoding/base64"
	"fmt"
	"io"
)

// b64Batch is how many base64 characters a b64Pieces decodes at once.
// Tests lower it.
var b64Batch = 64 << 10

// b64Pieces decodes base64 text written a piece at a time, without "\n",
// "\r" and " ", as base64.StdEncoding.DecodeString decodes the whole text
// so cleaned: the same bytes, and an error exactly where it fails (one
// that wraps errNotBase64). It writes the bytes to w.
type b64Pieces struct {
	w   io.Writer
	q   []byte // characters not yet decoded
	out []byte
	n   int64 // bytes decoded
	err error
}

var b64Skip = [256]bool{'\n': true, '\r': true, ' ': true}

// write takes the next piece of the text.
func (d *b64Pieces) write(p []byte) {
	for len(p) > 0 && d.err == nil {
		room := b64Batch + 4 - len(d.q)
		if room <= 0 {
			d.decode(false)
			continue
		}
		// A run up to the next byte left out is copied at once: a byte at
		// a time, this loop cost more than the decoding.
		chunk := p[:min(room, len(p))]
		n := 0
		for n < len(chunk) && !b64Skip[chunk[n]] {
			n++
		}
		d.q = append(d.q, chunk[:n]...)
		if p = p[n:]; n < len(chunk) {
			p = p[1:]
		}
	}
}

// close decodes what is left and returns how many bytes the text decoded
// to, or the first error.
func (d *b64Pieces) close() (int64, error) {
	if d.err == nil {
		d.decode(true)
	}
	return d.n, d.err
}

// decode decodes the whole quanta of q, all of it when last. Padding ends
// the text: "=" before the last quantum fails as DecodeString fails on
// what follows it, so decode keeps at least one character back until the
// end.
func (d *b64Pieces) decode(last bool) {
	n := len(d.q)
	if !last {
		n = (len(d.q) - 1) / 4 * 4
		for _, c := range d.q[:n] {
			if c == '=' {
				d.err = fmt.Errorf("%w: %w", errNotBase64, base64.CorruptInputError(d.n))
				return
			}
		}
	}
	if cap(d.out) < base64.StdEncoding.DecodedLen(n) {
		d.out = make([]byte, base64.StdEncoding.DecodedLen(n))
	}
	m, err := base64.StdEncoding.Decode(d.out[:cap(d.out)], d.q[:n])
	if err != nil {
		d.err = fmt.Errorf("%w: %w", errNotBase64, err)
		return
	}
	if _, err := d.w.Write(d.out[:m]); err != nil {
		d.err = err
		return
	}
	d.n += int64(m)
	d.q = d.q[:copy(d.q, d.q[n:])]
}
