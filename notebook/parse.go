package notebook

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// parser reads JSON (RFC 8259) into values that keep their original text.
type parser struct {
	data string
	pos  int
	slab []value // values are carved from slabs: one allocation per 256
}

func (p *parser) alloc(k kind, raw string) *value {
	if len(p.slab) == 0 {
		// No more values than bytes are left: a small parse (a metadata
		// number's, goValue's) took a whole slab, 18 KB, per value.
		p.slab = make([]value, min(256, len(p.data)-p.pos+1))
	}
	v := &p.slab[0]
	p.slab = p.slab[1:]
	v.kind, v.raw = k, raw
	return v
}

func parseJSON(data string) (*value, error) {
	p := &parser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected %s after the top-level value", p.describe())
	}
	return v, nil
}

func (p *parser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.data[:p.pos], "\n")
	col := p.pos - strings.LastIndexByte(p.data[:p.pos], '\n')
	return &SyntaxError{Line: line, Column: col, Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.data[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*value, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d levels", maxDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input, want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		raw, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.alloc(kindString, raw), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range [...]struct {
			text string
			kind kind
		}{{"true", kindBool}, {"false", kindBool}, {"null", kindNull}, {"NaN", kindNumber}, {"Infinity", kindNumber}} {
			if strings.HasPrefix(p.data[p.pos:], lit.text) {
				p.pos += len(lit.text)
				return p.alloc(lit.kind, lit.text), nil
			}
		}
		if hint := p.markHint(); hint != "" {
			return nil, p.errorf("%s", hint)
		}
		return nil, p.errorf("unexpected %s, want a value", p.describe())
	}
}

// markHint says what a byte order mark at the start of the file is, which
// JSON does not allow (nor nbformat, so Jupyter cannot open it either).
func (p *parser) markHint() string {
	if p.pos != 0 {
		return ""
	}
	switch {
	case strings.HasPrefix(p.data, "\xef\xbb\xbf"):
		return "the file starts with a UTF-8 byte order mark, which JSON does not allow (Jupyter cannot open it either); " +
			"remove its first three bytes (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)"
	case strings.HasPrefix(p.data, "\xff\xfe"), strings.HasPrefix(p.data, "\xfe\xff"):
		return "the file is UTF-16 (it starts with a UTF-16 byte order mark); a notebook is UTF-8 JSON: " +
			"convert it (iconv -f UTF-16 -t UTF-8 FILE)"
	}
	return ""
}

func (p *parser) object(depth int) (*value, error) {
	p.pos++ // {
	v := p.alloc(kindObject, "")
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	var index map[string]int // member positions by name, once the object is large
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("unexpected %s, want a quoted object key", p.describe())
		}
		rawKey, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("unexpected %s after object key, want ':'", p.describe())
		}
		p.pos++
		p.space()
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.obj, index = addMember(v.obj, index, member{rawKey: rawKey, name: decodeString(rawKey), val: val})
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		return nil, p.errorf("unexpected %s in object, want ',' or '}'", p.describe())
	}
}

// addMember appends m to obj, or, when obj has its name already, puts its
// value in that member's place, as Python's json (and so nbformat and
// Jupyter) reads a key given twice: the last value, where the first was.
// Otherwise evalhost would view and run other code than Jupyter shows. A
// small object is searched; a large one indexes its names.
func addMember(obj []member, index map[string]int, m member) ([]member, map[string]int) {
	const small = 16
	if index == nil && len(obj) >= small {
		index = make(map[string]int, 2*len(obj))
		for i := range obj {
			index[obj[i].name] = i
		}
	}
	if index != nil {
		if i, ok := index[m.name]; ok {
			obj[i].val = m.val
			return obj, index
		}
		index[m.name] = len(obj)
		return append(obj, m), index
	}
	for i := range obj {
		if obj[i].name == m.name {
			obj[i].val = m.val
			return obj, nil
		}
	}
	return append(obj, m), nil
}

func (p *parser) array(depth int) (*value, error) {
	p.pos++ // [
	v := p.alloc(kindArray, "")
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.space()
		e, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.arr = append(v.arr, e)
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		return nil, p.errorf("unexpected %s in array, want ',' or ']'", p.describe())
	}
}

// str scans a string token and returns its raw text with quotes.
func (p *parser) str() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return p.data[start:p.pos], nil
		case c == '\\':
			if err := p.escape(); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.errorf("control character %U in string; it must be escaped", rune(c))
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf("invalid UTF-8 byte %#x in string", c)
			}
			p.pos += size
		}
	}
	p.pos = start
	return "", p.errorf("unterminated string")
}

func (p *parser) escape() error {
	if p.pos+1 >= len(p.data) {
		p.pos++
		return p.errorf("unterminated escape")
	}
	switch p.data[p.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.pos += 2
		return nil
	case 'u':
		if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
			return p.errorf(`bad \u escape, want four hex digits`)
		}
		p.pos += 6
		return nil
	default:
		p.pos++
		return p.errorf("bad escape \\%s in string", p.describe())
	}
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a JSON number, or Python's -Infinity: Python's json writes
// NaN and infinities (a papermill parameter, a metric) and reads them back,
// and so does nbformat, so a notebook that holds them is one Jupyter opens.
func (p *parser) number() (*value, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
		if strings.HasPrefix(p.data[p.pos:], "Infinity") {
			p.pos += len("Infinity")
			return p.alloc(kindNumber, p.data[start:p.pos]), nil
		}
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if n := digits(); n == 0 {
		return nil, p.errorf("bad number, want a digit")
	} else if n > 1 && p.data[intStart] == '0' {
		p.pos = intStart
		return nil, p.errorf("bad number, leading zero")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("bad number, want a digit after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("bad number, want a digit in the exponent")
		}
	}
	return p.alloc(kindNumber, p.data[start:p.pos]), nil
}

// decodeString decodes a valid raw string token (with quotes). A lone
// surrogate escape, which Go strings cannot hold, becomes U+FFFD.
func decodeString(raw string) string {
	s := raw[1 : len(raw)-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if r2 := hex4(s[i+2 : i+6]); utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			continue
		default: // " \ /
			b.WriteByte(s[i+1])
		}
		i += 2
	}
	return b.String()
}

func hex4(s string) rune {
	n, _ := strconv.ParseUint(s, 16, 32)
	return rune(n)
}
