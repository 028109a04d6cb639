package notebook

import (
	"unicode/utf8"
	"unsafe"
)

// StreamText builds a "stream" output from text that comes in pieces (a
// cell's prints), the output StreamOutput makes of their concatenation,
// holding the text once: each complete line is kept as it will be written.
// A cell that printed 300 MB was held in a buffer, then again split into
// lines, rebuilt at every flush. The zero StreamText is not usable; make
// one with NewStreamText.
type StreamText struct {
	name    string
	lines   []*value // the complete lines, JSON strings as written
	tail    []byte   // the text after the last complete line
	scanned int      // bytes of tail known to hold no line break
}

// NewStreamText returns an empty StreamText of the stdout or stderr (name)
// stream.
func NewStreamText(name string) *StreamText { return &StreamText{name: name} }

// Name is the stream's name.
func (s *StreamText) Name() string { return s.name }

// Write adds text to the stream. Its complete lines are read where they
// are (newString copies what it keeps); only what follows the last goes
// into the tail.
func (s *StreamText) Write(text string) {
	b := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	inTail := len(s.tail) > 0
	if inTail {
		s.tail = append(s.tail, text...)
		b = s.tail
	}
	start, i := 0, s.scanned
	for i < len(b) {
		end, next, wait := lineBreak(b, i)
		if wait {
			break
		}
		if end < 0 {
			i = next
			continue
		}
		s.lines = append(s.lines, newString(unsafe.String(&b[start], end-start)))
		start, i = end, end
	}
	s.scanned = i - start
	rest := b[start:]
	switch {
	case !inTail:
		s.tail = append(s.tail[:0], rest...)
	case start == 0:
	case cap(s.tail) > 16<<20 && len(rest) < cap(s.tail)/4:
		// A long line's buffer is not kept for the short ones after it.
		s.tail = append([]byte(nil), rest...)
	default:
		s.tail = append(s.tail[:0], rest...)
	}
}

// lineBreak reads the character at b[i] as splitLines does: end is the end
// of the line it breaks (-1 when it breaks none) and next where the scan
// goes on; wait is true when the character may not be whole yet: a "\r"
// that a "\n" may follow, a UTF-8 sequence cut short.
func lineBreak(b []byte, i int) (end, next int, wait bool) {
	switch c := b[i]; {
	case c == '\r':
		if i+1 == len(b) {
			return -1, i, true
		}
		if b[i+1] == '\n' {
			return i + 2, i + 2, false
		}
		return i + 1, i + 1, false
	case c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e:
		return i + 1, i + 1, false
	case c >= utf8.RuneSelf:
		if !utf8.FullRune(b[i:]) {
			return -1, i, true
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x85 || r == 0x2028 || r == 0x2029 {
			return i + size, i + size, false
		}
		return -1, i + size, false
	}
	return -1, i + 1, false
}

// Output is the stream output of the text written so far, as
// StreamOutput(name, text) builds it. Writes after it do not change it.
func (s *StreamText) Output() Output {
	arr := s.lines[:len(s.lines):len(s.lines)]
	if len(s.tail) > 0 {
		arr = append(arr, newString(string(s.tail)))
	}
	o := newObject()
	o.set("name", newString(s.name))
	o.set("output_type", newString("stream"))
	o.set("text", &value{kind: kindArray, arr: arr})
	return Output{o}
}
