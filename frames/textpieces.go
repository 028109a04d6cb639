package frames

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// pieceSize bounds a piece that TextPieces decodes: large enough that a
// piece costs little per byte, small enough to be nothing beside a large
// value. Tests lower it.
var pieceSize = 64 << 10

// TextPieces reads the string value of a bundle entry a piece at a time:
// the pieces joined are what [Bundle.Text] returns, but a large value (a
// display of hundreds of megabytes) is never held decoded whole.
type TextPieces struct {
	body  []byte // between the quotes
	plain bool   // no escapes and valid UTF-8: body is the text itself
	r     int    // read so far
	buf   []byte
}

// Pieces returns mime's value for reading in pieces; false where
// [Bundle.Text] says false (no such entry, not a JSON string).
func (b Bundle) Pieces(mime string) (TextPieces, bool) {
	return TextPiecesOf(b[mime])
}

// TextPiecesOf is [Bundle.Pieces] for one raw value.
func TextPiecesOf(raw json.RawMessage) (TextPieces, bool) {
	body, escaped, ok := scanString(raw)
	if !ok {
		return TextPieces{}, false
	}
	return TextPieces{body: body, plain: !escaped && utf8.Valid(body)}, true
}

// Len is the length of the value's JSON text between its quotes: the
// text's length when it has no escapes.
func (p *TextPieces) Len() int { return len(p.body) }

// MaxValueLen bounds the length of the JSON value [TextValue] (and
// SetText) makes of the text, or of any text made of it by leaving
// characters out, as sanitising does: an escape decodes to no more bytes
// than it takes, but json.Marshal writes "<", ">" and "&" in 6 bytes,
// U+2028 and U+2029 in 6 and a byte that is not UTF-8 as U+FFFD, in 3.
// It reads the value once, much faster than decoding it.
func (p *TextPieces) MaxValueLen() int {
	b := p.body
	n := len(b) + 2
	n += 5 * (bytes.Count(b, []byte{'<'}) + bytes.Count(b, []byte{'>'}) + bytes.Count(b, []byte{'&'}))
	n += 3 * (bytes.Count(b, []byte("\u2028")) + bytes.Count(b, []byte("\u2029")))
	if p.plain || utf8.Valid(b) {
		return n
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			n += 2
		}
		i += size
	}
	return n
}

// Done reports whether Next has returned all of the text.
func (p *TextPieces) Done() bool { return p.r >= len(p.body) }

// Next returns the next piece of the text, nil at its end. A piece is
// valid until the next call; it may be a part of the raw value, which the
// caller must not modify. Pieces end on rune boundaries.
func (p *TextPieces) Next() []byte {
	if p.r >= len(p.body) {
		return nil
	}
	if p.plain {
		p.r = len(p.body)
		return p.body
	}
	if p.buf == nil {
		p.buf = make([]byte, min(pieceSize, len(p.body))+2*utf8.UTFMax)
	}
	room := len(p.buf) - 2*utf8.UTFMax // what is left has room for two runes
	w := 0
	for p.r < len(p.body) && w < room {
		if p.body[p.r] == '\\' {
			w += p.unescape(p.buf[w:])
			continue
		}
		w += p.run(p.buf[w:], room-w)
	}
	return p.buf[:w]
}

// run copies into dst the bytes at p.r up to the next backslash, about n
// of them (at least one rune, at most n-1 and a rune), with each byte
// that is not UTF-8 made U+FFFD, as json.Unmarshal makes it.
func (p *TextPieces) run(dst []byte, n int) int {
	s := p.body[p.r:]
	end := min(len(s), n)
	if i := bytes.IndexByte(s[:end], '\\'); i >= 0 {
		end = i
	} else if end < len(s) {
		end = runeStartBefore(s, end)
	}
	if seg := s[:end]; len(seg) > 0 && utf8.Valid(seg) {
		p.r += end
		return copy(dst, seg)
	}
	w := 0
	for i := 0; i < len(s) && w < n && s[i] != '\\'; {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			w += utf8.EncodeRune(dst[w:], r)
		} else {
			w += copy(dst[w:], s[i:i+size])
		}
		i += size
		p.r += size
	}
	return w
}

// runeStartBefore moves a cut at s[end] back to the start of the rune it
// falls in, if that starts in the UTF8Max bytes before it.
func runeStartBefore(s []byte, end int) int {
	for k := end; k >= 0 && k > end-utf8.UTFMax; k-- {
		if utf8.RuneStart(s[k]) {
			return k
		}
	}
	return end
}

// unescape decodes the escape at p.r into dst, which has room for two
// runes. The escape is valid: scanString checked it.
func (p *TextPieces) unescape(dst []byte) int {
	s := p.body[p.r:]
	switch c := s[1]; c {
	case 'u':
		r := hex4(s[2:6])
		p.r += 6
		if utf16.IsSurrogate(r) {
			r1 := rune(-1)
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				r1 = hex4(s[8:12])
			}
			if dec := utf16.DecodeRune(r, r1); dec != utf8.RuneError {
				p.r += 6
				return utf8.EncodeRune(dst, dec)
			}
			r = utf8.RuneError
		}
		return utf8.EncodeRune(dst, r)
	default: // checked by scanString: one of JSON's one-character escapes
		dst[0], _ = simpleEscape(c)
	}
	p.r += 2
	return 1
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// scanString checks that raw is a JSON string, as json.Unmarshal would
// accept it into a string (whitespace may follow it), and returns what is
// between its quotes and whether that has an escape.
func scanString(raw []byte) (body []byte, escaped, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false, false
	}
	i := 1
	for i < len(raw) {
		i += stringRun(raw[i:])
		if i >= len(raw) {
			break
		}
		switch c := raw[i]; {
		case c == '"':
			for _, c := range raw[i+1:] {
				if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
					return nil, false, false
				}
			}
			return raw[1:i], escaped, true
		case c == '\\':
			n := escapeLen(raw[i:])
			if n == 0 {
				return nil, false, false
			}
			escaped = true
			i += n
		default: // a control byte
			return nil, false, false
		}
	}
	return nil, false, false
}

// escapeLen is the length of the valid escape at the start of s, else 0.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) < 6 {
			return 0
		}
		for _, c := range s[2:6] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// stringRun returns how many leading bytes of s need no attention inside
// a JSON string: no quote, backslash or control byte. It tests 8 bytes at
// a time, as plainPrefix8 does.
func stringRun(s []byte) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		hasZero := func(v uint64) uint64 { return (v - lsb) & ^v & msb }
		// Each test may flag bytes above a true hit (a borrow), never
		// below it, so the lowest flag is exact; high bytes are text.
		control := (w - lsb*0x20) & ^w & msb
		quote := hasZero(w ^ (lsb * '"'))
		backslash := hasZero(w ^ (lsb * '\\'))
		if m := control | quote | backslash; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}
