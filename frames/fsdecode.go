package frames

import (
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeFSString decodes quoted, a JSON string literal (its quotes
// included), as [AppendFSString] writes one: a lone surrogate U+DC80 to
// U+DCFF (\udcff) is the byte of invalid UTF-8 it stands for (0xff), as
// Python's os.fsencode takes it back, so a path or argument whose bytes
// are not UTF-8 survives a JSON request; every other escape is JSON's,
// another lone surrogate U+FFFD as encoding/json decodes it. ok is false
// when quoted is not a JSON string.
func DecodeFSString(quoted string) (s string, ok bool) {
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return "", false
	}
	in := quoted[1 : len(quoted)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '"' || c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(in) {
			return "", false
		}
		e := in[i+1]
		if e != 'u' {
			b, ok := simpleEscape(e)
			if !ok {
				return "", false
			}
			out = append(out, b)
			i += 2
			continue
		}
		r, ok := escapeHex(in, i+2)
		if !ok {
			return "", false
		}
		i += 6
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			// A high surrogate: a pair with the low one after it, if any.
			if lo, ok := escapeHex(in, i+2); ok && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
				out = utf8.AppendRune(out, utf16.DecodeRune(r, lo))
				i += 6
				continue
			}
			out = utf8.AppendRune(out, utf8.RuneError)
		case r >= 0xDC80 && r <= 0xDCFF:
			out = append(out, byte(r-0xDC00))
		default:
			out = utf8.AppendRune(out, r) // another lone surrogate is U+FFFD
		}
	}
	return string(out), true
}

// simpleEscape is the byte JSON's one-character escape \e stands for (\n
// is a newline); false when e makes no such escape. TextPieces and
// DecodeFSString read them so.
func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// escapeHex reads the 4 hex digits of a \u escape at s[i:].
func escapeHex(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	for _, c := range []byte(s[i : i+4]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0, false
		}
	}
	return hex4([]byte(s[i : i+4])), true
}
