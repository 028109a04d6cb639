package termrelay

import (
	"bytes"
	"io"
)

// crlfWriter writes what it is given with each "\r\n" made "\n": the
// inverse of a terminal's ONLCR, which maps every "\n" to "\r\n" (so
// "\r\r\n" was "\r\n"). A "\r" that ends one write waits for the next, which
// says whether a "\n" follows it, or for flush.
type crlfWriter struct {
	w       io.Writer
	pending bool // a "\r" held back from the last write
	buf     []byte
}

func (c *crlfWriter) Write(p []byte) (int, error) {
	n := len(p)
	c.buf = c.buf[:0]
	if c.pending && n > 0 {
		c.pending = false
		if p[0] != '\n' {
			c.buf = append(c.buf, '\r')
		}
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			c.buf = append(c.buf, p...)
			break
		}
		c.buf = append(c.buf, p[:i]...)
		p = p[i+1:]
		switch {
		case len(p) == 0:
			c.pending = true
		case p[0] != '\n': // a lone "\r" stays; "\r\n" loses its "\r"
			c.buf = append(c.buf, '\r')
		}
	}
	if _, err := c.w.Write(c.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// flush writes a "\r" held back at the end of the output.
func (c *crlfWriter) flush() {
	if c.pending {
		c.pending = false
		_, _ = c.w.Write([]byte{'\r'})
	}
}
