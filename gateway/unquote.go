package gateway

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	segjson "github.com/segmentio/encoding/json"
)

// A stream message's text is all of it that matters, and decoding its
// escapes (a newline is two bytes, \n) into a string of its own would hold
// the message and the text at once. Every escape is at least as long as
// what it decodes to, so the text is decoded in the message's own bytes and
// handed on as a string over them: decodeMessage does it before the message
// is shared, and the message's content is then gone.

// decodeStream decodes a stream message's content, its text in place; nil
// when it is not what ipykernel sends (the caller then decodes a copy, for
// the error).
func decodeStream(content []byte) *streamContent {
	var s struct {
		Name string          `json:"name"`
		Text json.RawMessage `json:"text"`
	}
	if parseJSON(content, &s, segjson.DontCopyRawMessage) != nil {
		return nil
	}
	text, ok := unquoteInPlace(s.Text)
	if !ok {
		return nil
	}
	return &streamContent{Name: s.Name, Text: text}
}

// unquoteInPlace decodes q, one JSON string, into its own bytes, as
// encoding/json decodes it. It is false, with q as it was, for anything
// else, and for invalid UTF-8, which encoding/json replaces with U+FFFD:
// that can be longer than what it replaces.
func unquoteInPlace(q []byte) (string, bool) {
	if !plainJSONString(q) {
		return "", false
	}
	s := q[1 : len(q)-1]
	w := 0
	for r := 0; r < len(s); {
		i := bytes.IndexByte(s[r:], '\\')
		if i < 0 {
			w += copy(s[w:], s[r:])
			break
		}
		w += copy(s[w:], s[r:r+i])
		r += i
		c := s[r+1]
		switch c {
		case 'u':
			rr, n := unicodeEscape(s[r:])
			w += utf8.EncodeRune(s[w:], rr) // at most 4 bytes for at least 6
			r += n
			continue
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		} // ", \ and / stand for themselves
		s[w] = c
		w, r = w+1, r+2
	}
	return unsafe.String(unsafe.SliceData(s), w), true
}

// plainJSONString reports whether q is one JSON string in valid UTF-8.
func plainJSONString(q []byte) bool {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' || !utf8.Valid(q) {
		return false
	}
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ' || c == '"':
			return false
		case c != '\\':
		case i+1 == len(s):
			return false
		case s[i+1] == 'u':
			if hex4(s[i:]) < 0 {
				return false
			}
			i += 5
		case simpleEscape(s[i+1]):
			i++
		default:
			return false
		}
	}
	return true
}

func simpleEscape(c byte) bool {
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	}
	return false
}

// unicodeEscape decodes the well-formed \uXXXX escape at the start of s,
// and a low surrogate's escape after a high one, as encoding/json does: a
// surrogate that is not half of a pair is U+FFFD. n is how many bytes it
// took.
func unicodeEscape(s []byte) (r rune, n int) {
	r = hex4(s)
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2 := hex4(s[6:]); r2 >= 0 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// hex4 is the value of the escape \uXXXX at the start of s, -1 if it is not one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
