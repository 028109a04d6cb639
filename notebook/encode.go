package notebook

import (
	"io"
	"strings"
	"unicode/utf8"
)

// layout is how a notebook file is indented, learnt from the file so an
// untouched notebook is written back byte for byte. nbformat writes one space
// per level, "\n" line ends and a final newline; a notebook saved on Windows
// (or checked out with git's autocrlf) has "\r\n" line ends.
type layout struct {
	indent       string
	newline      string // "\n" or "\r\n"
	finalNewline bool
}

var nbformatLayout = layout{indent: " ", newline: "\n", finalNewline: true}

// detectLayout reads the indent unit from the whitespace before the first
// key and the line end from the first line (a first key at the start of
// its line is indent=0's layout). Compact files get nbformat's layout.
func detectLayout(data string) layout {
	l := layout{indent: " ", newline: "\n", finalNewline: strings.HasSuffix(data, "\n")}
	if nl := strings.IndexByte(data, '\n'); nl > 0 && data[nl-1] == '\r' {
		l.newline = "\r\n"
	}
	rest := strings.TrimLeft(data, " \t\r\n")
	if !strings.HasPrefix(rest, "{") {
		return l
	}
	rest = rest[1:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimLeft(rest[:nl], " \t\r") != "" {
		return l
	}
	line := rest[nl+1:]
	ws := len(line) - len(strings.TrimLeft(line, " \t"))
	switch {
	case ws > 0 && ws <= 16:
		l.indent = line[:ws]
	case ws == 0 && strings.HasPrefix(line, `"`): // json.dumps(indent=0): line breaks, no indent
		l.indent = ""
	}
	return l
}

// encoder writes values as Python's json.dumps(indent=N, separators=(",",
// ": ")) lays them out; scalars are written with their stored text.
type encoder struct {
	buf     []byte
	indent  string
	newline string // "\n" or "\r\n"
	cells   *value // the notebook's cells array, written through cache; nil for other values
	cache   *cellCache
	out     io.Writer // a streamed encoding's destination (streamsave.go); nil: buf is the encoding
	err     error     // out's first error
}

func (e *encoder) breakLine(depth int) {
	e.buf = append(e.buf, e.newline...)
	for i := 0; i < depth; i++ {
		e.buf = append(e.buf, e.indent...)
	}
}

func (e *encoder) value(v *value, depth int) {
	switch v.kind {
	case kindObject:
		if len(v.obj) == 0 {
			e.buf = append(e.buf, "{}"...)
			return
		}
		e.buf = append(e.buf, '{')
		for i, m := range v.obj {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.breakLine(depth + 1)
			e.buf = append(e.buf, m.rawKey...)
			e.buf = append(e.buf, ": "...)
			e.value(m.val, depth+1)
			e.spill(spillBytes)
		}
		e.breakLine(depth)
		e.buf = append(e.buf, '}')
	case kindArray:
		if len(v.arr) == 0 {
			e.buf = append(e.buf, "[]"...)
			return
		}
		if v == e.cells {
			e.cellArray(v, depth)
			return
		}
		e.buf = append(e.buf, '[')
		for i, el := range v.arr {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.breakLine(depth + 1)
			e.value(el, depth+1)
			e.spill(spillBytes)
		}
		e.breakLine(depth)
		e.buf = append(e.buf, ']')
	default:
		e.buf = append(e.buf, v.raw...)
	}
}

const hexDigits = "0123456789abcdef"

// appendPyString appends s quoted as Python's json.dumps(ensure_ascii=False)
// does: only '"', '\\' and control characters are escaped, with the short
// forms for \b \f \n \r \t and lowercase \u00XX for the rest; everything
// else, <>& and U+2028 included, is written as is. Invalid UTF-8 bytes become
// U+FFFD, as a file must be valid UTF-8.
func appendPyString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// splitLines is Python's str.splitlines(keepends=True), which nbformat uses
// to store multiline text: it breaks after \n, \r, \r\n, \v, \f, \x1c, \x1d,
// \x1e, \x85, U+2028 and U+2029.
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		end := -1
		switch {
		case c == '\r':
			end = i + 1
			if end < len(s) && s[end] == '\n' {
				end++
			}
		case c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e:
			end = i + 1
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == 0x85 || r == 0x2028 || r == 0x2029 {
				end = i + size
			} else {
				i += size
				continue
			}
		}
		if end < 0 {
			i++
			continue
		}
		lines = append(lines, s[start:end])
		start, i = end, end
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
