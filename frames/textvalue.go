package frames

import (
	"encoding/json"
	"unicode/utf8"
)

// TextValue builds, from a text written a piece at a time, the value
// [Bundle.SetText] stores for the whole text: a large sanitised display
// is then encoded as it is made, never held as text and JSON at once. The
// zero value is an empty text.
type TextValue struct {
	dst   []byte
	carry [utf8.UTFMax]byte // a rune split between two pieces
	n     int
}

// Grow makes room for about n more bytes of JSON.
func (v *TextValue) Grow(n int) {
	v.open()
	if cap(v.dst)-len(v.dst) < n {
		v.dst = append(make([]byte, 0, len(v.dst)+n), v.dst...)
	}
}

func (v *TextValue) open() {
	if v.dst == nil {
		v.dst = append(v.dst, '"')
	}
}

// Write appends the next piece of the text. A piece may end inside a rune.
func (v *TextValue) Write(p []byte) {
	v.open()
	for v.n > 0 {
		if !utf8.FullRune(v.carry[:v.n]) {
			if len(p) == 0 {
				return
			}
			v.carry[v.n] = p[0]
			v.n++
			p = p[1:]
			continue
		}
		_, size := utf8.DecodeRune(v.carry[:v.n])
		v.dst = appendEscaped(v.dst, v.carry[:size])
		v.n = copy(v.carry[:], v.carry[size:v.n])
	}
	k := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				k = i
			}
			break
		}
	}
	v.dst = appendEscaped(v.dst, p[:k])
	v.n = copy(v.carry[:], p[k:])
}

// Value ends the text and returns its JSON value; the TextValue is then
// empty again.
func (v *TextValue) Value() json.RawMessage {
	v.open()
	v.dst = appendEscaped(v.dst, v.carry[:v.n]) // an unfinished rune
	out := append(v.dst, '"')
	*v = TextValue{}
	return out
}

// appendEscaped appends s escaped for the inside of a JSON string exactly
// as json.Marshal escapes it (HTML characters too, unlike AppendString,
// so that a value SetText makes reads as it always has).
func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendByteEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		} else {
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// htmlSafe marks the ASCII bytes json.Marshal leaves as they are.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
